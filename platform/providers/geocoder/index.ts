// Geocoding behind a small interface: `gazetteer` (default, PostgreSQL, offline) or `mapbox`.
import type { Executor } from '../../../db/executor.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { GazetteerGeocoder } from './gazetteer.js';
import { MapboxGeocoder } from './mapbox.js';
import type { Geocoder } from './types.js';

export * from './types.js';
export { GazetteerGeocoder } from './gazetteer.js';
export { MapboxGeocoder } from './mapbox.js';

export function createGeocoder(deps: { config: Config; db: Executor; log: Logger }): Geocoder {
  const cfg = deps.config.logistics.geocoder;
  return cfg.provider === 'mapbox' ? new MapboxGeocoder(cfg, deps.log) : new GazetteerGeocoder(deps.db);
}
