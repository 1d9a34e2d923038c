/**
 * The idempotent write of one audit record, as one Lua script so Redis runs it atomically: every
 * check happens before the first write, and the two writes (the per-authority sorted set and the
 * by-id index) land together or not at all, also in the append-only file (Redis logs a script's
 * effects as one MULTI/EXEC block).
 *
 * KEYS[1] per-authority sorted set: member = encoded record, score = commit_index
 * KEYS[2] hash: transfer id -> encoded record
 * ARGV[1] commit_index, ARGV[2] id, ARGV[3] encoded record, ARGV[4] seq
 *
 * Returns {status, existing}: 1 created; 0 the identical record was already there;
 * 2 a different record holds this (commit_index, seq); 3 a record at another position has this id.
 * Records sealed by one entry share its commit_index as their score and differ by seq.
 */
export const PUT_AUDIT_RECORD_LUA = `
local atIndex = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
for _, existing in ipairs(atIndex) do
  local ok, stored = pcall(cjson.decode, existing)
  local seq = 0
  if ok and type(stored) == 'table' and type(stored.seq) == 'number' then
    seq = stored.seq
  end
  if tostring(seq) == ARGV[4] then
    if existing == ARGV[3] then
      return {0, ''}
    end
    return {2, existing}
  end
end
local withId = redis.call('HGET', KEYS[2], ARGV[2])
if withId then
  return {3, withId}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return {1, ''}
`;

export const PutStatus = {
  AlreadyStored: 0,
  Created: 1,
  PositionTaken: 2,
  IdTaken: 3,
} as const;
