
import { describeLimiterBehaviour } from '../../integration/limits/limiter-behaviour.js';
import { buildLimiter, limitsConfig } from '../../integration/limits/limiter-fixtures.js';

// No redis.url and no cluster: the in-memory store (one instance).
describeLimiterBehaviour('memory', async (settings, events) => buildLimiter(limitsConfig(settings), events));
