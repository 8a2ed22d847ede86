"""The Lua scripts of ``suture.workers.store.batch_lines``: each once-only Batch API write as one atomic step.

Keys and arguments are documented at each script; ``batch_lines`` draws the layout.
"""

# Record a line as waiting, once. KEYS: where, pending:<model>, since, reply:<custom_id>, awaiting;
# ARGV: custom_id, entry JSON, model, now_s, job id.
# Returns 2 when the line already has a reply, 0 when it is already waiting or in a round, 1 added.
ADD_LINE = """
if redis.call('EXISTS', KEYS[4]) == 1 then return 2 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], 'pending')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[5], 'NX', ARGV[4], ARGV[5])
return 1
"""

# Move up to max_lines waiting lines of a model into a new round. KEYS: pending:<model>,
# round:<r>:lines, round:<r>, rounds, since, where; ARGV: round id, model, now_s, max_lines, ttl_s.
# Returns how many lines moved (0: none waiting, or the round exists already).
CLAIM = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local count = redis.call('HLEN', KEYS[1])
if count == 0 then
  redis.call('HDEL', KEYS[5], ARGV[2])
  return 0
end
local limit = tonumber(ARGV[4])
if count <= limit then
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('HDEL', KEYS[5], ARGV[2])
else
  local flat = redis.call('HGETALL', KEYS[1])
  for i = 1, 2 * limit, 2 do
    redis.call('HSET', KEYS[2], flat[i], flat[i + 1])
    redis.call('HDEL', KEYS[1], flat[i])
  end
  count = limit
  redis.call('HSET', KEYS[5], ARGV[2], 0)  -- the lines left are due at the next sweep
end
for _, custom_id in ipairs(redis.call('HKEYS', KEYS[2])) do
  redis.call('HSET', KEYS[6], custom_id, ARGV[1])
end
redis.call('HSET', KEYS[3], 'model', ARGV[2], 'status', 'claimed', 'created_s', ARGV[3],
           'next_poll_s', 0, 'lines', count, 'polls', 0)
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('SADD', KEYS[4], ARGV[1])
return count
"""

# A round is done. KEYS: round:<r>, rounds, where, round:<r>:lines, awaiting, lease:<r>;
# ARGV: round id, JSON list of the jobs its lines belong to.
CLOSE = """
redis.call('HSET', KEYS[1], 'status', 'done')
redis.call('SREM', KEYS[2], ARGV[1])
local ids = redis.call('HKEYS', KEYS[4])
for _, custom_id in ipairs(ids) do redis.call('HDEL', KEYS[3], custom_id) end
for _, job_id in ipairs(cjson.decode(ARGV[2])) do redis.call('ZREM', KEYS[5], job_id) end
redis.call('DEL', KEYS[6])
return #ids
"""
