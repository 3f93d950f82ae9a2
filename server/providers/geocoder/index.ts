// Geocoding behind a small interface: `gazetteer` (default, PostgreSQL, offline) or `mapbox`.
import type { AppDeps } from '../../deps.js';
import { GazetteerGeocoder } from './gazetteer.js';
import { MapboxGeocoder } from './mapbox.js';
import type { Geocoder } from './types.js';

export * from './types.js';
export { GazetteerGeocoder } from './gazetteer.js';
export { MapboxGeocoder } from './mapbox.js';

export function createGeocoder(deps: Pick<AppDeps, 'config' | 'db' | 'log'>): Geocoder {
  const cfg = deps.config.logistics.geocoder;
  return cfg.provider === 'mapbox' ? new MapboxGeocoder(cfg, deps.log) : new GazetteerGeocoder(deps.db);
}

// One geocoder per running service, built on first use from its dependencies (the HTTP adapter
// keeps no per-request state, the gazetteer one only the pool).
const perService = new WeakMap<AppDeps, Geocoder>();
export function geocoderOf(deps: AppDeps): Geocoder {
  let geocoder = perService.get(deps);
  if (!geocoder) {
    geocoder = createGeocoder(deps);
    perService.set(deps, geocoder);
  }
  return geocoder;
}
