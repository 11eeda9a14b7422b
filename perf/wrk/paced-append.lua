-- wrk script: append.lua at a fixed offered rate instead of as fast as the connections allow.
-- Usage: wrk -t1 -c256 -d10s -s perf/wrk/paced-append.lua <url-of-stream> -- <body-file> <content-type> <authorization or ""> <rate>
-- <rate>: requests per second for this wrk thread (use -t1). Each connection that is ready for its
-- next request takes the next free slot of one schedule (slot n at n / rate seconds): when the
-- server keeps up, requests go out at the rate whatever its latency, so two servers (or two modes
-- of one) are measured at the same load, where CPU per request compares like with like. When it
-- does not keep up, slots fall behind, delays are 0 and the load is closed-loop at -c.
-- wrk times each request from when it is written, so the schedule's waits are not latency.

local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } paced_timespec;
int clock_gettime(int clk_id, paced_timespec *tp);
]]
local ts = ffi.new("paced_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local interval_ms = nil
local next_slot = nil

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post-body.lua") -- post_body(): the request every script sends

function init(args)
  post_body(args[1], args[2], args[3])
  interval_ms = 1000 / assert(tonumber(args[4]), "a rate (requests per second) is the fourth argument")
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
