-- wrk script: POST the same body to one stream path (the path comes from the URL).
-- Usage: wrk -t1 -c64 -d10s -s perf/wrk/append.lua <url-of-stream> -- <body-file> <content-type> [<authorization>]
-- The body file is written by perf/run.js (100-byte record, or a 1,000-record batch).
-- done() (report.lua) prints one `WRKJSON {...}` line that perf/lib/wrk.js parses.

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post-body.lua") -- post_body(): the request every script sends

function init(args)
  -- perf/auth-overhead.js: the same appends with a bearer token (args[3]).
  post_body(args[1], args[2], args[3])
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "report.lua") -- done(): the WRKJSON line
