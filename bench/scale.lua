-- The scale bench's load (bench/scale.sh): one script, one mode per phase.
--   wrk ... -s bench/scale.lua http://127.0.0.1:PORT -- MODE DIR THREADS
-- DIR holds the seeder's lists (cms-bench-seed): orgs.tsv, reads.tsv, updates*.tsv,
-- publishes*.tsv (key TAB document id) and media.txt. wrk runs one Lua state per thread: lists
-- whose entries must not be shared (updates, publishes) are dealt out by thread, line n to
-- thread n % THREADS, so no two threads ever write the same document.

local threads_seen = 0
function setup(thread)
  thread:set("thread_index", threads_seen)
  threads_seen = threads_seen + 1
end

local function load_tsv(path, mine)
  local rows = {}
  local n = 0
  for line in io.lines(path) do
    if not mine or n % thread_count == thread_index then
      local key, id = line:match("^([^\t]+)\t([^\t]+)$")
      rows[#rows + 1] = { key = key, id = id, rev = 1 }
    end
    n = n + 1
  end
  assert(#rows > 0, path .. " has no rows for thread " .. thread_index)
  return rows
end

local function load_lines(path)
  local rows = {}
  for line in io.lines(path) do rows[#rows + 1] = line end
  return rows
end

local mode, orgs, reads, updates, publishes, media
local next_update, next_publish, next_read = 0, 0, 0

function init(args)
  mode = args[1]
  local dir = args[2]
  thread_count = tonumber(args[3])
  math.randomseed(os.time() + thread_index * 7919)
  local mixed = mode == "mixed"
  orgs = load_tsv(dir .. "/orgs.tsv", false)
  if mode == "read" or mixed then reads = load_tsv(dir .. "/reads.tsv", false) end
  if mode == "update" then updates = load_tsv(dir .. "/updates.tsv", true) end
  if mode == "publish" then publishes = load_tsv(dir .. "/publishes.tsv", true) end
  if mixed then
    updates = load_tsv(dir .. "/updates-mix.tsv", true)
    publishes = load_tsv(dir .. "/publishes-mix.tsv", true)
  end
  if mode == "media" or mixed then media = load_lines(dir .. "/media.txt") end
  -- Each thread starts at its own place in the shared lists.
  next_read = thread_index * 7919
  -- With a fourth argument `debug`, the first non-2xx answers of each thread are printed.
  if args[4] == "debug" then
    local shown = 0
    response = function(status, headers, body)
      if status >= 300 and shown < 3 then
        shown = shown + 1
        io.stderr:write(string.format("thread %d: %d %s\n", thread_index, status, body))
      end
    end
  end
end

local function any_org() return orgs[math.random(#orgs)] end

local function json_headers(key)
  return { ["x-api-key"] = key, ["content-type"] = "application/json" }
end

local requests = {}

-- GET one document by id with its organization's key.
requests.read = function()
  next_read = next_read + 1
  local row = reads[(next_read % #reads) + 1]
  return wrk.format("GET", "/api/documents/" .. row.id, { ["x-api-key"] = row.key })
end

-- GET a page of 20 published posts sorted by `views` (indexed), one of the first 5 pages.
requests.list = function()
  local org = any_org()
  local path = string.format("/api/documents?type=post&status=published&sort=-views&pageSize=20&page=%d",
    math.random(1, 5))
  return wrk.format("GET", path, { ["x-api-key"] = org.key })
end

-- POST /api/documents/query: a range on `views` (indexed), sorted by it, a page of 20.
requests.query = function()
  local org = any_org()
  local body = string.format(
    '{"type":"post","where":{"views":{"greater_than":%d}},"sort":"-views","limit":20}',
    math.random(0, 990000))
  return wrk.format("POST", "/api/documents/query", json_headers(org.key), body)
end

-- GraphQL: the same range as a query, with each post's author resolved.
requests.graphql = function()
  local org = any_org()
  local body = string.format(
    '{"query":"{ allPost(where: {views: {greater_than: %d}}, sort: [\\"-views\\"], limit: 20) { id title views author { name } } }"}',
    math.random(0, 990000))
  return wrk.format("POST", "/api/graphql", json_headers(org.key), body)
end

-- GET /media of one of the seeded images (public assets: no credentials).
requests.media = function()
  return wrk.format("GET", media[math.random(#media)])
end

-- POST /api/documents: a new draft post.
requests.create = function()
  local org = any_org()
  local views = math.random(0, 999999)
  local body = string.format(
    '{"type":"post","data":{"title":"Created %d-%d","views":%d,"publishedOn":"2025-%02d-%02d","tags":["bench","new"]}}',
    thread_index, math.random(1, 1000000000), views, math.random(1, 12), math.random(1, 28))
  return wrk.format("POST", "/api/documents", json_headers(org.key), body)
end

-- PUT /api/documents/{id} with the revision it is at: each row of this thread's share is
-- updated in turn, its revision counted here (every update is expected to succeed).
requests.update = function()
  next_update = next_update + 1
  local row = updates[(next_update % #updates) + 1]
  local body = string.format(
    '{"data":{"title":"Updated %s r%d","views":%d,"tags":["bench","updated"]},"expectedRevision":%d}',
    row.id, row.rev, math.random(0, 999999), row.rev)
  row.rev = row.rev + 1
  return wrk.format("PUT", "/api/documents/" .. row.id, json_headers(row.key), body)
end

-- POST /api/documents/{id}/publish of a draft post (published again once the share wraps).
requests.publish = function()
  next_publish = next_publish + 1
  local row = publishes[(next_publish % #publishes) + 1]
  return wrk.format("POST", "/api/documents/" .. row.id .. "/publish", json_headers(row.key), "{}")
end

-- The mixed phase: a fixed weighted mix (out of 100).
local mix = {
  { 45, "read" }, { 10, "list" }, { 10, "query" }, { 5, "graphql" }, { 10, "media" },
  { 8, "create" }, { 8, "update" }, { 4, "publish" },
}
requests.mixed = function()
  local r = math.random(1, 100)
  for _, entry in ipairs(mix) do
    if r <= entry[1] then return requests[entry[2]]() end
    r = r - entry[1]
  end
end

local verified = false
request = function()
  -- wrk calls request() once in thread 0's state before the run, to check the request it
  -- builds: answer that call with a request that takes no document from the lists.
  if thread_index == 0 and not verified then
    verified = true
    return wrk.format("GET", "/healthz")
  end
  return requests[mode]()
end
