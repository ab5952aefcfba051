/**
 * The Lua the Redis limiter store runs. One script per hit keeps the ban check, the window check
 * and the bookkeeping atomic: Redis runs a script to completion before any other command, so
 * concurrent hits from any number of gateway instances cannot both take the last request.
 *
 * Windows are hashes {count, reset}; `reset` is in the callers' clock (ARGV now), and keys only
 * get a relative PEXPIRE so that a skew between that clock and Redis's never deletes live state.
 * A window whose stored reset is not after `now` is treated as free, expired key or not.
 * Numbers go back to Redis through '%d', since Lua would print large ones in exponent form.
 */

/**
 * KEYS: one hash per window, then the refusal counter (hash), then the ban (string).
 * ARGV: now, ban threshold, ban length in ms, then limit and length in ms of each window, then
 * when the request was sent.
 * Reply: kind, extra (refusing window's 1-based index, or ban end, or 0), then count and reset
 * of each window after this hit (0, 0 for a window that is not running).
 */
export const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local banMs = tonumber(ARGV[3])
local n = #KEYS - 2
local refusalsKey, banKey = KEYS[n + 1], KEYS[n + 2]
local function int(x) return string.format('%d', x) end

local counts, resets = {}, {}
for i = 1, n do
  local stored = redis.call('HMGET', KEYS[i], 'count', 'reset')
  local reset = tonumber(stored[2])
  if reset and reset > now then
    counts[i], resets[i] = tonumber(stored[1]), reset
  else
    counts[i], resets[i] = 0, 0
  end
end

local function reply(kind, extra)
  local out = { kind, extra }
  for i = 1, n do
    out[#out + 1] = counts[i]
    out[#out + 1] = resets[i]
  end
  return out
end

local bannedUntil = tonumber(redis.call('GET', banKey))
if bannedUntil and bannedUntil > now then return reply('banned', bannedUntil) end

-- Among the full windows, the one that frees last refuses.
local refusing, refusingReset = 0, 0
for i = 1, n do
  if counts[i] >= tonumber(ARGV[2 + 2 * i]) then
    local reset = resets[i]
    if reset == 0 then reset = now + tonumber(ARGV[3 + 2 * i]) end
    if refusing == 0 or reset > refusingReset then refusing, refusingReset = i, reset end
  end
end

if refusing == 0 then
  for i = 1, n do
    if resets[i] == 0 then
      resets[i] = now + tonumber(ARGV[3 + 2 * i])
      counts[i] = 1
      redis.call('HSET', KEYS[i], 'count', 1, 'reset', int(resets[i]))
      redis.call('HDEL', KEYS[i], 'refunded')
      redis.call('PEXPIRE', KEYS[i], int(resets[i] - now))
    else
      counts[i] = redis.call('HINCRBY', KEYS[i], 'count', 1)
    end
  end
  return reply('allowed', 0)
end

local stored = redis.call('HMGET', refusalsKey, 'count', 'reset', 'told')
local refusals, toldAt = 0, now
local refusalsReset = tonumber(stored[2])
if refusalsReset and refusalsReset > now then
  refusals, toldAt = tonumber(stored[1]), tonumber(stored[3]) or 0
  -- Sent before its client could have heard of the run's first refusal: refused, counted toward nothing.
  if tonumber(ARGV[4 + 2 * n]) < toldAt then return reply('limited', refusing) end
end
refusals = refusals + 1
if refusals > threshold then
  local untilMs = now + banMs
  redis.call('SET', banKey, int(untilMs), 'PX', int(math.max(banMs, 1)))
  redis.call('DEL', refusalsKey)
  return reply('banned', untilMs)
end
-- The count lives until the refusing window frees: a client that waits for it starts afresh.
redis.call('HSET', refusalsKey, 'count', refusals, 'reset', int(refusingReset), 'told', int(toldAt))
redis.call('PEXPIRE', refusalsKey, int(refusingReset - now))
return reply('limited', refusing)
`;

/** KEYS: the ban. ARGV: now, ban end. Sets the ban unless one ending later stands. */
export const BAN_SCRIPT = `
local now, untilMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local current = tonumber(redis.call('GET', KEYS[1]))
if untilMs <= now or (current and current >= untilMs) then return 0 end
redis.call('SET', KEYS[1], string.format('%d', untilMs), 'PX', string.format('%d', untilMs - now))
return 1
`;

/** KEYS: one hash per window. Reply: count and reset of each (0, 0 when absent). */
export const PEEK_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  local stored = redis.call('HMGET', KEYS[i], 'count', 'reset')
  out[#out + 1] = tonumber(stored[1]) or 0
  out[#out + 1] = tonumber(stored[2]) or 0
end
return out
`;

/**
 * KEYS: one hash per window. ARGV: now, then the reset each window had when the request was
 * counted, then each window's limit. Takes one off each window still in that run and above zero,
 * unless one of them has already given back its limit in this run (docs/contract.md §10): then
 * none does. Reply: count and reset of each afterwards (0, 0 when absent), as PEEK_SCRIPT's.
 */
export const REFUND_SCRIPT = `
local now = tonumber(ARGV[1])
local n = #KEYS
local counts, resets, running = {}, {}, {}
local granted = true
for i = 1, n do
  local stored = redis.call('HMGET', KEYS[i], 'count', 'reset', 'refunded')
  counts[i], resets[i] = tonumber(stored[1]) or 0, tonumber(stored[2]) or 0
  running[i] = resets[i] > now and resets[i] == tonumber(ARGV[1 + i]) and counts[i] > 0
  if running[i] and (tonumber(stored[3]) or 0) >= tonumber(ARGV[1 + n + i]) then granted = false end
end
local out = {}
for i = 1, n do
  if granted and running[i] then
    counts[i] = redis.call('HINCRBY', KEYS[i], 'count', -1)
    redis.call('HINCRBY', KEYS[i], 'refunded', 1)
  end
  out[#out + 1] = counts[i]
  out[#out + 1] = resets[i]
end
return out
`;
