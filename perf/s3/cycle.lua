-- wrk script: GET the request targets listed in a file (one path?query per line) in turn.
-- Used for "a new signature per request": thousands of distinct presigned URLs of one
-- object, more than svc-cache remembers verified results for, so every request pays the
-- full SigV4 verification.   wrk ... -s perf/s3/cycle.lua http://host:port -- targets.txt
local targets = {}
local i = 0

function init(args)
  for line in io.lines(args[1]) do
    targets[#targets + 1] = line
  end
end

function request()
  i = i % #targets + 1
  return wrk.format("GET", targets[i])
end
