-- wrk script: POST the same body to one stream path (the path comes from the URL).
-- Usage: wrk -t1 -c64 -d10s -s perf/wrk/append.lua <url-of-stream> -- <body-file> <content-type> [<authorization>]
-- The body file is written by perf/run.js (100-byte record, or a 1,000-record batch).
-- done() prints one `WRKJSON {...}` line that perf/lib/wrk.js parses.

function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = args[2]
  -- perf/auth-overhead.js: the same appends with a bearer token.
  if args[3] ~= nil and args[3] ~= "" then wrk.headers["Authorization"] = args[3] end
end

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
