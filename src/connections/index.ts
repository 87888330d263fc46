export { connectionCapFor, openFileLimit, RESERVED_DESCRIPTORS } from './capacity.js';
export {
  ConnectionRegistry,
  EVICTION_REASONS,
  PRESSURE_SHARE,
  type ConnectionCounts,
  type ConnectionEvents,
  type ConnectionPolicy,
  type EvictionReason,
} from './registry.js';
