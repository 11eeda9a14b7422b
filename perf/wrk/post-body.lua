-- What every append script in perf/wrk/ sends: a POST of one body file with its content type and,
-- when given, an Authorization header. A script loads it with
--   dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post-body.lua")
-- and calls post_body(...) from its init(args).

function post_body(body_file, content_type, authorization)
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = content_type
  if authorization ~= nil and authorization ~= "" then wrk.headers["Authorization"] = authorization end
end
