-- wrk script: append-spread.lua at a fixed offered rate (the schedule of paced-append.lua): W2's
-- load (the same body to one of N streams chosen at random per request) at one load, where CPU per
-- append compares like with like between two servers or two modes of one.
-- Usage: wrk -t1 -c256 -d10s -s perf/wrk/paced-append-spread.lua <base-url> -- <body-file> <content-type> <prefix> <N> <rate>
-- <rate>: requests per second for this wrk thread (use -t1). When the server does not keep up,
-- slots fall behind, delays are 0 and the load is closed-loop at -c.

local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } paced_spread_timespec;
int clock_gettime(int clk_id, paced_spread_timespec *tp);
]]
local ts = ffi.new("paced_spread_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local paths = {}
local count = 0
local interval_ms = nil
local next_slot = nil

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post-body.lua") -- post_body(): the request every script sends

function init(args)
  post_body(args[1], args[2], nil)
  local prefix = args[3]
  count = tonumber(args[4])
  for i = 0, count - 1 do
    paths[i + 1] = string.format("%s%04d", prefix, i)
  end
  interval_ms = 1000 / assert(tonumber(args[5]), "a rate (requests per second) is the fifth argument")
  math.randomseed(os.time())
end

function request()
  return wrk.format(nil, paths[math.random(count)])
end

function delay()
  local t = now_ms()
  if next_slot == nil or next_slot < t - 1000 then next_slot = t end -- start, or a second behind: do not burst to catch up
  local wait = next_slot - t
  next_slot = next_slot + interval_ms
  if wait < 1 then return 0 end
  return math.floor(wait)
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "report.lua") -- done(): the WRKJSON line
