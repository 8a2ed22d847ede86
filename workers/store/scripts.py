"""The job store's Lua scripts: each once-only write of ``suture.workers.store.job_store`` as one atomic step.

Keys and arguments are documented at each script; the store module docstring draws the layout.

A soft-delivered job is listed twice: on the review list of every job, and on its tenant's
(``review:t:<tenant>``,
"" for a job enqueued without one). The scripts that list or unlist it name the tenant's list from the
tenant stored in the job's hash, read in the same atomic step, so the two can never disagree. That key is
built inside the script, not passed in KEYS: suture runs on one Redis (no Cluster), where this is safe.
"""

# KEYS: job, idempotency key (the job key when there is none), deadlines, waiting list, its class's tenant
# set (both the job key when unused); ARGV: job id, spec, now_s, deadline_s, ttl_s, meta, '1' if KEYS[2] is
# an idempotency key, the request's sha256, the tenant ('' none), '1' to push the id on the waiting list, the
# tenant as the set holds it.
# The key holds "<job id> <sha256>"; returns {that value, 0} when the key is known, else {job id, 1}.
CREATE = """
if ARGV[7] == '1' then
  local existing = redis.call('GET', KEYS[2])
  if existing then return {existing, 0} end
  redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[8], 'EX', ARGV[5])
end
redis.call('HSET', KEYS[1], 'spec', ARGV[2], 'status', 'queued', 'version', 0, 'round', 0,
           'created_s', ARGV[3], 'deadline_s', ARGV[4], 'meta', ARGV[6])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'tenant', ARGV[9]) end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
if ARGV[10] == '1' then  -- the dispatcher sends it (waiting.py): its class's list for its tenant
  redis.call('LPUSH', KEYS[4], ARGV[1])
  redis.call('SADD', KEYS[5], ARGV[11])
end
return {ARGV[1], 1}
"""

# Compare-and-set of the engine state; with an action (a surgical round), also store it once.
# KEYS: job; ARGV: expected version, new version, state, action's attempt n ('' none), action JSON.
# Returns 1 applied, 0 version moved on (a duplicate), -1 no such job, -2 already delivered.
SAVE_STATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'result') == 1 then return -2 end
local v = tonumber(redis.call('HGET', KEYS[1], 'version'))
if v ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'version', ARGV[2], 'status', 'running')
if ARGV[4] ~= '' then redis.call('HSETNX', KEYS[1], 'action:' .. ARGV[4], ARGV[5]) end
return 1
"""

PUT_SLICE = """
local added
if ARGV[2] == '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1, 0, 0} end
  added = 0
else
  added = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
local count = redis.call('HLEN', KEYS[1])
local claimed = 0
if count >= tonumber(ARGV[3]) then
  claimed = redis.call('HSETNX', KEYS[2], 'merge:' .. ARGV[4], 1)
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
return {added, count, claimed}
"""

# KEYS: job, deadlines, done channel, review list; ARGV: result, status, job id, ttl_s, the state version
# the result was built from ('' any), a time the job stays due at on the watchdog's list ('' none: it
# leaves the list), now_s, the tenants' review list prefix. A soft-delivered job joins the review list
# and its tenant's (people look at it). Returns 1
# stored, 0 a result was there already, -1 no such job, -3 the state moved on from that version (build
# the result again).
DELIVER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'result') == 1 then return 0 end
if ARGV[5] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'version')) ~= tonumber(ARGV[5]) then return -3 end
redis.call('HSET', KEYS[1], 'result', ARGV[1], 'status', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[3])
else
  redis.call('ZREM', KEYS[2], ARGV[3])
end
if ARGV[2] == 'soft_delivered' then
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[3])
  redis.call('ZADD', ARGV[8] .. (redis.call('HGET', KEYS[1], 'tenant') or ''), ARGV[7], ARGV[3])
end
redis.call('PUBLISH', KEYS[3], ARGV[2])
return 1
"""

# A job whose producer could not publish its first message, removed while no task has opened it.
# KEYS: job, deadlines, idempotency key (the job key when there is none); ARGV: job id, '1' if
# KEYS[3] is an idempotency key. Returns 1 removed, 0 not queued (a task opened it) or no such job.
DISCARD = """
if redis.call('HGET', KEYS[1], 'status') ~= 'queued' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then
  local held = redis.call('GET', KEYS[3])
  if held and (held == ARGV[1] or string.sub(held, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') then
    redis.call('DEL', KEYS[3])
  end
end
return 1
"""

# Resume: only a soft-delivered job; its result joins the history, the state gets the new spec, and
# it leaves the review lists. KEYS: job, deadlines, history, review list; ARGV: spec, state, deadline_s,
# job id, ttl_s, now_s (the round's start), the tenants' review list prefix.
RESUME = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'soft_delivered' then return 0 end
redis.call('RPUSH', KEYS[3], redis.call('HGET', KEYS[1], 'result'))
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('HDEL', KEYS[1], 'result')
redis.call('HINCRBY', KEYS[1], 'round', 1)
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'state', ARGV[2], 'status', 'queued', 'deadline_s', ARGV[3],
           'round_started_s', ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('ZREM', ARGV[7] .. (redis.call('HGET', KEYS[1], 'tenant') or ''), ARGV[4])
return 1
"""

# A once-flag that can be re-taken: the field holds 'sent' once done, else 'owner|until_s' while held.
# KEYS[1] flags hash; ARGV: flag, owner, now_s, lease_s, ttl_s. Returns 1 if the caller holds it now.
LEASE = """
local holder = redis.call('HGET', KEYS[1], ARGV[1])
local now = tonumber(ARGV[3])
if holder then
  if holder == 'sent' then return 0 end
  local owner, until_s = string.match(holder, '^(.*)|([^|]*)$')
  if owner ~= ARGV[2] and tonumber(until_s or '0') > now then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. tostring(now + tonumber(ARGV[4])))
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""

# A task's opening read in one round trip: count its execution, then read the job.
# KEYS: job, flags, slices of attempt n, progress; ARGV: task_key, ttl_s, pointer ('' none), '1' for all
# slices, now_s, job id, execution token. Every opening also marks the job's progress time (the
# watchdog's stall clock). The execution's token joins the task's unfinished executions (field
# 'exec:<task_key>|<token>', counted in 'unfinished:<task_key>'); the same token again (an in-process
# re-run) counts once. A slice whose reply is already stored is not counted (it makes no model call).
# Returns {job hash (flat), unfinished executions, pointer's reply stored (0/1), slices hash (flat) or {}}.
OPEN_TASK = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {{}, 0, 0, {}} end
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[6])
local stored = 0
if ARGV[3] ~= '' then stored = redis.call('HEXISTS', KEYS[3], ARGV[3]) end
local count = 0
if stored == 0 then
  if redis.call('HGET', KEYS[1], 'status') == 'queued' then
    redis.call('HSET', KEYS[1], 'status', 'running')
  end
  local counter = 'unfinished:' .. ARGV[1]
  if redis.call('HSETNX', KEYS[2], 'exec:' .. ARGV[1] .. '|' .. ARGV[7], 1) == 1 then
    count = redis.call('HINCRBY', KEYS[2], counter, 1)
  else
    count = tonumber(redis.call('HGET', KEYS[2], counter) or '0')
  end
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
local slices = {}
if ARGV[4] == '1' then slices = redis.call('HGETALL', KEYS[3]) end
return {redis.call('HGETALL', KEYS[1]), count, stored, slices}
"""

# An execution that ended without applying its work leaves the task's unfinished executions.
# KEYS: flags; ARGV: task_key, token. Returns the task's unfinished count afterwards.
CLOSE_TASK = """
local counter = 'unfinished:' .. ARGV[1]
if redis.call('HDEL', KEYS[1], 'exec:' .. ARGV[1] .. '|' .. ARGV[2]) == 1 then
  return redis.call('HINCRBY', KEYS[1], counter, -1)
end
return tonumber(redis.call('HGET', KEYS[1], counter) or '0')
"""

# SAVE_STATE and DELIVER as one step, for an attempt that finishes its job: same checks, same writes.
# KEYS: job, deadlines, done channel, review list; ARGV: expected version, new version, state, result,
# status, job id, ttl_s, now_s, the tenants' review list prefix. Returns 1 applied and delivered, 0 version
# moved on, -1 no such job, -2 delivered.
SAVE_AND_DELIVER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'result') == 1 then return -2 end
local v = tonumber(redis.call('HGET', KEYS[1], 'version'))
if v ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'version', ARGV[2], 'result', ARGV[4], 'status', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('ZREM', KEYS[2], ARGV[6])
if ARGV[5] == 'soft_delivered' then
  redis.call('ZADD', KEYS[4], ARGV[8], ARGV[6])
  redis.call('ZADD', ARGV[9] .. (redis.call('HGET', KEYS[1], 'tenant') or ''), ARGV[8], ARGV[6])
end
redis.call('PUBLISH', KEYS[3], ARGV[5])
return 1
"""

# A reviewer concludes a soft-delivered job (accepts it as is, or cancels it): KEYS: job, done channel,
# review list; ARGV: the new result, the round it was read at, ttl_s, job id, its status, the tenants'
# review list prefix. Returns 1 stored, 0 not soft-delivered or another round, -1 no such job.
CONCLUDE_REVIEW = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'soft_delivered' then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'round') or '0') ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'result', ARGV[1], 'status', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('ZREM', ARGV[6] .. (redis.call('HGET', KEYS[1], 'tenant') or ''), ARGV[4])
redis.call('PUBLISH', KEYS[2], ARGV[5])
return 1
"""

# Catch the tenants' review lists up with the review list of every job: what was listed before they existed
# (a store from before the upgrade), or by a process of an older version since. KEYS: review list, its
# high-water mark (the last delivery time indexed); ARGV: job key prefix ('<p>:job:'), the tenants' review
# list prefix, at most this many entries per call. Each soft-delivered job joins its tenant's list at its
# delivery time. Returns {entries read, 1 if the mark moved on else 0}.
INDEX_REVIEW = """
local since = redis.call('GET', KEYS[2]) or '-inf'
local found = redis.call('ZRANGEBYSCORE', KEYS[1], since, '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
for i = 1, #found, 2 do
  local fields = redis.call('HMGET', ARGV[1] .. found[i], 'status', 'tenant')
  if fields[1] == 'soft_delivered' then
    redis.call('ZADD', ARGV[2] .. (fields[2] or ''), found[i + 1], found[i])
  end
end
local moved = 0
if #found > 0 and found[#found] ~= since then
  redis.call('SET', KEYS[2], found[#found])
  moved = 1
end
return {#found / 2, moved}
"""

# The newest soft-delivered jobs on each of KEYS[2..] (tenants' review lists), at most ARGV[2] per list. An
# entry whose job is no longer soft-delivered (left by a process of an older version) is dropped from that
# list as it is met, so it never takes a place in the window; one whose job expired, from the review list
# of every job (KEYS[1]) too. ARGV: job key prefix, limit. Returns one flat {id, score, ...} list per list.
REVIEW_LISTS = """
local lists = {}
local limit = tonumber(ARGV[2])
for k = 2, #KEYS do
  local kept, start = {}, 0
  while #kept < 2 * limit do
    local page = redis.call('ZREVRANGE', KEYS[k], start, start + limit - 1, 'WITHSCORES')
    if #page == 0 then break end
    local stayed = 0
    for i = 1, #page, 2 do
      if redis.call('HGET', ARGV[1] .. page[i], 'status') == 'soft_delivered' then
        stayed = stayed + 1
        if #kept < 2 * limit then
          kept[#kept + 1] = page[i]
          kept[#kept + 1] = page[i + 1]
        end
      else
        redis.call('ZREM', KEYS[k], page[i])
        if redis.call('EXISTS', ARGV[1] .. page[i]) == 0 then redis.call('ZREM', KEYS[1], page[i]) end
      end
    end
    start = start + stayed
  end
  lists[k - 1] = kept
end
return lists
"""
