import { LIMIT_KINDS, SPEND_KINDS, type CounterName } from '../limit-kinds/index.js';

/**
 * The one Lua script of the Redis store, run for every admission and for every batch of
 * settles and lease renewals no admission carried. Atomic: checking every scope of a request,
 * charging only when all pass, and applying earlier requests' settles are one step, so
 * instances sharing Redis admit exactly the limit between them.
 *
 * Layout: one hash per scope (`<prefix>{team}:key:<id>`, `…:project:<team>/<project>`), so a
 * request touches one key per scope (two, typically) whatever the number of limits:
 *   c          the scope's numbers, packed little-endian doubles (see ScopeNumbers):
 *              in-flight count, next sweep, the hash's expiry, then per limit kind (its index
 *              in LIMIT_KINDS) the units used in its window and when that window ends
 *   L:<lease>  one in-flight request (concurrency): when its lease lapses unless renewed
 * Numbers go in and out of the script packed too (`struct`, C code): Redis runs Lua slowly
 * enough (≈0.1–0.25 µs per string made or number parsed) that parsing text arguments and
 * keeping a field per counter cost more than every `redis.call` together. A scope costs HGET
 * and HSET (plus HDEL when leases are released); TIME once; PEXPIREAT about once a minute; a
 * sweep for lapsed leases (HGETALL) at most once per lease TTL / 3.
 *
 * A check refuses when the request needs more than remains or nothing remains: a used-up
 * limit refuses even a request that reserves 0 (SPEC 14.3; `refuses` in store.ts).
 *
 * A counter whose window end has passed reads as 0, and its next charge opens a new window
 * (fixed windows from the first charge; a calendar window is opened with the time left in its
 * UTC day or month). Lapsed leases (an instance that died) leave the count when a sweep finds them.
 *
 * KEYS: the scope hashes. ARGV:
 *   [1] lease TTL ms   [2] this admission's lease field (`L:<instance>:<n>`, or empty)
 *   [3] checks, 5 doubles each: key#, kind index, max, cost, window ms (0: in-flight);
 *       cost -1: a limit that does not apply to this request, read but never refusing or charged
 *   [4] counter settles, 4 doubles each: key#, kind index, delta, window end
 *   [5] leases released, text: `key# L:<lease> …`   [6] leases renewed, same
 * Returns doubles packed like the arguments: admitted (1/0), now, then used and end per
 * check. Used is after the charge if admitted; end is the window's end (for a counter not in
 * a window yet, the one a charge would open; 0 for in-flight). Then per counter settle, the
 * counter after it and its window's end (0, 0 when dropped): the budget alerts read which
 * overrun crossed a threshold from there (SPEC 24), at no extra command.
 */
export const LIMITS_SCRIPT = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local leaseTtl, lease = tonumber(ARGV[1]), ARGV[2]
local nkeys = #KEYS
local rep, spack, sunpack = string.rep, struct.pack, struct.unpack

-- s[1] in-flight count, s[2] next sweep, s[3] hash expiry; kind i: s[4 + 2i] used, s[5 + 2i] end
local states, changed, fields = {}, {}, {}
for k = 1, nkeys do
  local blob = redis.call('HGET', KEYS[k], 'c')
  local s
  if blob then
    local count = #blob / 8
    s = {sunpack('<' .. rep('d', count), blob)}
    s[count + 1] = nil
  else
    s = {0, 0, 0}
  end
  states[k], changed[k] = s, false
end

local released, renewed = ARGV[5], ARGV[6]
if released ~= '' or renewed ~= '' then
  local function pairsOf(list)
    local out = {}
    local k
    for w in string.gmatch(list, '%S+') do
      if k then
        local l = out[k] or {}
        l[#l + 1] = w
        out[k] = l
        k = nil
      else k = tonumber(w) end
    end
    return out
  end
  for k, list in pairs(pairsOf(released)) do
    local gone = redis.call('HDEL', KEYS[k], unpack(list))
    if gone > 0 then
      states[k][1] = math.max(0, states[k][1] - gone)
      changed[k] = true
    end
  end
  for k, list in pairs(pairsOf(renewed)) do
    local present = redis.call('HMGET', KEYS[k], unpack(list))
    local s, f = states[k], fields[k] or {}
    for i, field in ipairs(list) do
      if not present[i] then s[1] = s[1] + 1 end
      f[#f + 1], f[#f + 2] = field, now + leaseTtl
    end
    fields[k], changed[k] = f, true
  end
end
for k = 1, nkeys do
  local s = states[k]
  if s[1] > 0 and s[2] <= now then
    local flat = redis.call('HGETALL', KEYS[k])
    local lapsed, live = {}, 0
    for i = 1, #flat, 2 do
      if string.byte(flat[i], 1) == 76 and string.byte(flat[i], 2) == 58 then -- 'L:'
        if tonumber(flat[i + 1]) <= now then lapsed[#lapsed + 1] = flat[i] else live = live + 1 end
      end
    end
    if #lapsed > 0 then redis.call('HDEL', KEYS[k], unpack(lapsed)) end
    s[1], s[2], changed[k] = live, now + math.floor(leaseTtl / 3), true
  end
end

-- per settle: the counter after it and its window's end (0, 0: dropped), for the alerts
local settled = {}
local settles = ARGV[4]
if settles ~= '' then
  local count = #settles / 8
  local t = {sunpack('<' .. rep('d', count), settles)}
  for i = 1, count, 4 do
    local k, at, delta, e = t[i], 4 + 2 * t[i + 1], t[i + 2], t[i + 3]
    local s = states[k]
    local v, cur = s[at] or 0, s[at + 1] or 0
    if cur <= now then v, cur = 0, 0 end
    if e > now and (cur == e or delta > 0) then
      if cur == e then
        v = v + delta
        if v < 0 then v = 0 end
      else v = v + delta end
      if cur == 0 then cur = e end
      s[at], s[at + 1], changed[k] = v, cur, true
      settled[#settled + 1], settled[#settled + 2] = v, cur
    else
      settled[#settled + 1], settled[#settled + 2] = 0, 0
    end
  end
end

local checks = ARGV[3]
local nchecks = #checks / 40
local c = {sunpack('<' .. rep('d', nchecks * 5), checks)}
local out = {1, now}
local admitted = 1
for n = 1, nchecks do
  local i = n * 5 - 4
  local s, window, used, e = states[c[i]], c[i + 4]
  if window == 0 then
    used, e = s[1], 0
  else
    local at = 4 + 2 * c[i + 1]
    e = s[at + 1]
    if e and e > now then used = s[at] else used, e = 0, now + window end
  end
  -- refuses() of store.ts: more than remains, or nothing remains (a used-up limit refuses a 0
  -- too), unless the limit does not apply to this request (cost -1)
  local max, cost = c[i + 2], c[i + 3]
  if cost >= 0 and (used >= max or used + cost > max) then admitted = 0 end
  out[2 * n + 1], out[2 * n + 2] = used, e
end

if admitted == 1 then
  for n = 1, nchecks do
    local i = n * 5 - 4
    local cost = c[i + 3]
    if cost > 0 then
      local k = c[i]
      local s = states[k]
      local used = out[2 * n + 1] + cost
      out[2 * n + 1] = used
      if c[i + 4] == 0 then
        s[1] = s[1] + 1
        if s[2] <= now then s[2] = now + math.floor(leaseTtl / 3) end
        local f = fields[k] or {}
        f[#f + 1], f[#f + 2] = lease, now + leaseTtl
        fields[k] = f
      else
        local at = 4 + 2 * c[i + 1]
        s[at], s[at + 1] = used, out[2 * n + 2]
      end
      changed[k] = true
    end
  end
else
  out[1] = 0
end

for k = 1, nkeys do
  if changed[k] then
    local s = states[k]
    local top = s[1] > 0 and now + leaseTtl or 0
    -- table.maxn, not #: a kind charged before lower ones leaves holes, where # may stop.
    local count = table.maxn(s)
    if count % 2 == 0 then count = count + 1 end
    for at = 4, count do
      local v = s[at]
      if v == nil then s[at] = 0 elseif at % 2 == 1 and v > top then top = v end
    end
    local extend = top > s[3]
    if extend then s[3] = top + 60000 end
    local f = fields[k]
    if f then
      redis.call('HSET', KEYS[k], 'c', spack('<' .. rep('d', count), unpack(s, 1, count)), unpack(f))
    else
      redis.call('HSET', KEYS[k], 'c', spack('<' .. rep('d', count), unpack(s, 1, count)))
    end
    if extend then redis.call('PEXPIREAT', KEYS[k], s[3]) end
  end
end

local base = #out
for i = 1, #settled do out[base + i] = settled[i] end
return spack('<' .. rep('d', #out), unpack(out))
`;

/** What the script keeps of one scope in its `c` field, decoded (operators' tools, tests). */
export interface ScopeNumbers {
  /** Requests in flight (live leases, plus lapsed ones no sweep has found yet). */
  readonly inflight: number;
  readonly nextSweep: number;
  readonly expires: number;
  /** Per limit kind charged so far: units used and when that window ends (epoch ms, Redis clock). */
  readonly counters: Partial<Record<CounterName, { readonly used: number; readonly end: number }>>;
}

/** Decodes a scope hash's `c` field (as a Buffer: `HGETBUFFER key c`). */
export function decodeScopeNumbers(blob: Buffer): ScopeNumbers {
  const numbers: number[] = [];
  for (let offset = 0; offset + 8 <= blob.length; offset += 8) numbers.push(blob.readDoubleLE(offset));
  const counters: Partial<Record<CounterName, { used: number; end: number }>> = {};
  [...LIMIT_KINDS, ...SPEND_KINDS].forEach((kind, index) => {
    const end = numbers[4 + 2 * index] ?? 0;
    if (end > 0) counters[kind.name] = { used: numbers[3 + 2 * index] ?? 0, end };
  });
  return { inflight: numbers[0] ?? 0, nextSweep: numbers[1] ?? 0, expires: numbers[2] ?? 0, counters };
}
