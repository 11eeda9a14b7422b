-- wrk script: POST the same body to one of N streams chosen at random per request.
-- Stream i is at <prefix><i zero-padded to 4 digits>, e.g. /w2-0042 or /v1/stream/w2-0042;
-- perf/run.js creates all N streams before the run.
-- Usage: wrk -t1 -c64 -d10s -s perf/wrk/append-spread.lua <base-url> -- <body-file> <content-type> <prefix> <N>
-- done() (report.lua) prints one `WRKJSON {...}` line that perf/lib/wrk.js parses.

local paths = {}
local count = 0

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post-body.lua") -- post_body(): the request every script sends

function init(args)
  post_body(args[1], args[2], nil)
  local prefix = args[3]
  count = tonumber(args[4])
  for i = 0, count - 1 do
    paths[i + 1] = string.format("%s%04d", prefix, i)
  end
  math.randomseed(os.time())
end

function request()
  return wrk.format(nil, paths[math.random(count)])
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "report.lua") -- done(): the WRKJSON line
