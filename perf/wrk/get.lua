-- wrk script: GET one path on every request (a read, or a refusal such as a stream that does not exist).
-- Usage: wrk -t1 -c16 -d5s -s perf/wrk/get.lua <base-url> -- <path>
-- done() (report.lua) prints one `WRKJSON {...}` line that perf/lib/wrk.js parses.

local path

function init(args)
  path = args[1]
end

function request()
  return wrk.format("GET", path)
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "report.lua") -- done(): the WRKJSON line
