import { createLimiter } from '../../../src/limits/index.js';
import { describeLimiterBehaviour } from '../../integration/limits/limiter-behaviour.js';
import { limitsConfig } from '../../integration/limits/limiter-fixtures.js';

// No redis.url and no cluster: the in-memory store (one instance).
describeLimiterBehaviour('memory', async (settings, events) => createLimiter(limitsConfig(settings), events));
