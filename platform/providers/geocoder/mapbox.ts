// A real geocoding provider: Mapbox Geocoding API v6 (forward and reverse). Every failure -
// network error, timeout, non-2xx answer, a body that is not the documented shape - becomes
// GeocoderUnavailableError within `timeoutMs`, which the operations answer as 502.
import { haversineKm } from '../../../domain/geo/geometry.js';
import type { LogisticsConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import {
  GeocoderUnavailableError,
  type AddressSuggestion,
  type Geocoder,
  type GeoPoint,
  type ReverseRequest,
  type SuggestRequest,
} from './types.js';

/** The provider's largest page for forward search. */
const MAX_FORWARD_LIMIT = 10;

// Mapbox feature types -> AddressSuggestionOutput.category.
const CATEGORY: Record<string, string> = {
  address: 'address',
  secondary_address: 'address',
  street: 'street',
  poi: 'poi',
  place: 'locality',
  locality: 'locality',
  neighborhood: 'locality',
  district: 'locality',
};

interface MapboxFeature {
  geometry?: { coordinates?: unknown };
  properties?: {
    feature_type?: unknown;
    name?: unknown;
    full_address?: unknown;
    place_formatted?: unknown;
    coordinates?: { longitude?: unknown; latitude?: unknown };
  };
}

function pointOf(feature: MapboxFeature): GeoPoint | null {
  const c = feature.properties?.coordinates;
  let lon = c?.longitude;
  let lat = c?.latitude;
  if (typeof lon !== 'number' || typeof lat !== 'number') {
    const g = feature.geometry?.coordinates;
    if (Array.isArray(g)) [lon, lat] = g as unknown[];
  }
  if (typeof lon !== 'number' || typeof lat !== 'number' || Math.abs(lon) > 180 || Math.abs(lat) > 90) return null;
  return { lon, lat };
}

function toSuggestion(feature: MapboxFeature): AddressSuggestion | null {
  const p = feature.properties ?? {};
  const location = pointOf(feature);
  if (!location || typeof p.name !== 'string' || !p.name) return null;
  const type = typeof p.feature_type === 'string' ? p.feature_type : 'poi';
  const full = typeof p.full_address === 'string' && p.full_address ? p.full_address : null;
  return { title: p.name, category: CATEGORY[type] ?? 'poi', location, place_name: full };
}

/**
 * Settles like `work`, or rejects with a TimeoutError once `signal` aborts. fetch() honours the
 * signal while it waits for headers; reading the body is bounded here explicitly, so the deadline
 * holds whatever the fetch implementation does with a body that trickles in.
 */
function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('deadline passed', 'TimeoutError'));
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      // A rejection of `work` (fetch's body reading) is an Error.
      (err: Error) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}

export class MapboxGeocoder implements Geocoder {
  constructor(
    private readonly cfg: LogisticsConfig['geocoder'],
    private readonly log: Logger,
  ) {}

  async suggest({ query, near, limit, lang }: SuggestRequest): Promise<AddressSuggestion[]> {
    const features = await this.fetchFeatures('forward', {
      q: query,
      proximity: `${near.lon},${near.lat}`,
      limit: String(Math.min(limit, MAX_FORWARD_LIMIT)),
      language: lang,
      autocomplete: 'true',
    });
    // The contract orders by distance from the point (then title), not by the provider's relevance.
    return features
      .map(toSuggestion)
      .filter((s): s is AddressSuggestion => s !== null)
      .map((s) => ({ s, d: haversineKm(near, s.location) }))
      .sort((a, b) => a.d - b.d || (a.s.title < b.s.title ? -1 : a.s.title > b.s.title ? 1 : 0))
      .slice(0, limit)
      .map(({ s }) => s);
  }

  async reverse({ point, radiusMeters, lang }: ReverseRequest): Promise<AddressSuggestion | null> {
    const features = await this.fetchFeatures('reverse', {
      longitude: String(point.lon),
      latitude: String(point.lat),
      types: 'address,street',
      language: lang,
    });
    // The provider has no radius: apply ours, then buildings before streets, then the nearest.
    const inRadius = features
      .map(toSuggestion)
      .filter((s): s is AddressSuggestion => s !== null)
      .map((s) => ({ s, d: haversineKm(point, s.location) }))
      .filter(({ d }) => d * 1000 <= radiusMeters)
      .sort((a, b) => Number(b.s.category === 'address') - Number(a.s.category === 'address') || a.d - b.d);
    return inRadius[0]?.s ?? null;
  }

  private async fetchFeatures(mode: 'forward' | 'reverse', params: Record<string, string>): Promise<MapboxFeature[]> {
    const url = new URL(`${this.cfg.url}/search/geocode/v6/${mode}`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set('access_token', this.cfg.accessToken ?? '');
    const started = performance.now();
    let body: unknown;
    try {
      // One deadline for the whole exchange, body included: a provider that trickles its answer
      // must not hold the request past the timeout.
      const signal = AbortSignal.timeout(this.cfg.timeoutMs);
      const response = await fetch(url, { headers: { accept: 'application/json' }, signal });
      if (!response.ok) {
        await response.arrayBuffer().catch(() => undefined);
        // The URL carries the access token: log the status only.
        this.log.warn('geocoder answered with an error', { provider: 'mapbox', mode, status: response.status });
        throw new GeocoderUnavailableError(`geocoder answered ${response.status}`);
      }
      body = await beforeDeadline(response.json(), signal, () => {
        void response.body?.cancel().catch(() => undefined);
      });
    } catch (err) {
      if (err instanceof GeocoderUnavailableError) throw err;
      const reason = (err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
      this.log.warn('geocoder failed', { provider: 'mapbox', mode, reason, duration_ms: Math.round(performance.now() - started) });
      throw new GeocoderUnavailableError(`geocoder ${reason}`);
    }
    const features = (body as { features?: unknown })?.features;
    if (!Array.isArray(features)) {
      this.log.warn('geocoder answered an unexpected body', { provider: 'mapbox', mode });
      throw new GeocoderUnavailableError('geocoder answered an unexpected body');
    }
    return features.filter((f): f is MapboxFeature => typeof f === 'object' && f !== null);
  }
}
