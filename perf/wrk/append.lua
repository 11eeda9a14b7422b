-- wrk script: POST the same body to one stream path (the path comes from the URL).
-- Usage: wrk -t1 -c64 -d10s -s perf/wrk/append.lua <url-of-stream> -- <body-file> <content-type> [<authorization>]
-- The body file is written by perf/run.js (100-byte record, or a 1,000-record batch).
-- done() (report.lua) prints one `WRKJSON {...}` line that perf/lib/wrk.js parses.

function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = args[2]
  -- perf/auth-overhead.js: the same appends with a bearer token.
  if args[3] ~= nil and args[3] ~= "" then wrk.headers["Authorization"] = args[3] end
end

dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "report.lua") -- done(): the WRKJSON line
