-- The done() hook every script in perf/wrk/ shares: one `WRKJSON {...}` line that perf/lib/wrk.js
-- parses (latencies in microseconds). A script loads it with
--   dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "report.lua")
-- (its own directory: wrk runs scripts from any working directory).

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
