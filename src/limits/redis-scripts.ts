/**
 * Lua run inside Redis, so that checking and charging every scope of a request is one atomic
 * step and one round trip. All keys of one call share a `{team}` hash tag (one Cluster slot).
 *
 * Windowed counters keep rate-limiter-flexible's fixed-window semantics (the memory store is
 * RateLimiterMemory): a string counter whose window starts at its first charge and whose PTTL
 * is the time left. RateLimiterRedis itself is not used here: its script charges one key per
 * call and charges refused points too, so it cannot give "all scopes pass or nothing is
 * charged" across instances; this script reads every counter first and charges only when all pass.
 *
 * Concurrency is a sorted set of leases scored by their expiry (Redis TIME, one clock for all
 * instances). Expired leases are dropped before counting, so the slots of an instance that
 * died come back after the lease TTL; live instances renew their leases (RENEW_LEASES).
 */

/** Redis < 7 needs effects replication before a write may follow TIME; in 7+ it is the default. */
const NOW = `
if redis.replicate_commands then redis.replicate_commands() end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * Reads a space-separated list of numbers: the scripts take their per-check numbers as one
 * argument, since a client pays per argument (ioredis flattens and measures each one).
 */
const NUMBERS = `
local function numbers(list)
  local out = {}
  for n in string.gmatch(list, '%S+') do out[#out + 1] = tonumber(n) end
  return out
end
`;

/**
 * KEYS[i]: counter or lease set of check i.
 * ARGV[1]: lease member, ARGV[2]: lease TTL ms, ARGV[3]: per check, max cost windowMs (0 = leases).
 * Returns {admitted, used_1, reset_1, used_2, reset_2, ...}; used is after the charge if admitted.
 */
export const ADMIT = `${NOW}${NUMBERS}
local member, leaseTtl, spec = ARGV[1], tonumber(ARGV[2]), numbers(ARGV[3])
local used, reset, fresh = {}, {}, {}
local admitted = 1
for i = 1, #KEYS do
  local max, cost, window = spec[i * 3 - 2], spec[i * 3 - 1], spec[i * 3]
  if window == 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    used[i] = redis.call('ZCARD', KEYS[i])
    reset[i] = 0
  else
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl == -2 then
      used[i], reset[i], fresh[i] = 0, window, true
    else
      used[i] = tonumber(redis.call('GET', KEYS[i])) or 0
      if ttl > 0 then reset[i] = ttl else reset[i], fresh[i] = window, true end
    end
  end
  if cost > 0 and used[i] + cost > max then admitted = 0 end
end
if admitted == 1 then
  for i = 1, #KEYS do
    local cost, window = spec[i * 3 - 1], spec[i * 3]
    if window == 0 then
      redis.call('ZADD', KEYS[i], now + leaseTtl, member)
      redis.call('PEXPIRE', KEYS[i], leaseTtl)
      used[i] = used[i] + 1
    elseif cost > 0 then
      redis.call('INCRBY', KEYS[i], cost)
      if fresh[i] then redis.call('PEXPIRE', KEYS[i], window) end
      used[i] = used[i] + cost
    end
  end
end
local out = {admitted}
for i = 1, #KEYS do
  out[#out + 1] = used[i]
  out[#out + 1] = reset[i]
end
return out
`;

/**
 * Settles a finished request. KEYS: the counters to adjust, then the lease sets to leave.
 * ARGV[1]: lease member, ARGV[2]: number of counters, ARGV[3]: per counter, delta and ms left in
 * the request's window. A refund to a counter that is gone (its window ended, Redis restarted)
 * is dropped: refunding into a new window would grant quota never reserved there. A charge to
 * a missing counter creates it for the rest of the window.
 */
export const SETTLE = `${NUMBERS}
local member, counters, spec = ARGV[1], tonumber(ARGV[2]), numbers(ARGV[3] or '')
for i = 1, counters do
  local delta, left = spec[2 * i - 1], spec[2 * i]
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('INCRBY', KEYS[i], delta) < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') end
  elseif delta > 0 then
    redis.call('SET', KEYS[i], delta, 'PX', left)
  end
end
for i = counters + 1, #KEYS do
  redis.call('ZREM', KEYS[i], member)
end
return 1
`;

/** KEYS[1]: a lease set. ARGV[1]: lease TTL ms, ARGV[2..]: members still in flight. */
export const RENEW_LEASES = `${NOW}
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`;
