// The geocoder behind address search and reverse geocoding. Results use the API's field names
// (AddressSuggestionOutput), so nothing is renamed on the way out.

export interface GeoPoint {
  lon: number;
  lat: number;
}

export interface AddressSuggestion {
  title: string;
  /** `address`, `street`, `poi` or `locality` (see AddressSuggestionOutput.category). */
  category: string;
  location: GeoPoint;
  place_name: string | null;
}

export interface SuggestRequest {
  /** The customer's text, trimmed and with whitespace collapsed. */
  query: string;
  /** Results are ordered nearest to this point first. */
  near: GeoPoint;
  limit: number;
  lang: 'ru' | 'en';
}

export interface ReverseRequest {
  point: GeoPoint;
  radiusMeters: number;
  lang: 'ru' | 'en';
}

export interface Geocoder {
  /** Addresses matching the query, nearest to `near` first, at most `limit`. */
  suggest(request: SuggestRequest): Promise<AddressSuggestion[]>;
  /** The known address nearest to the point within the radius (buildings before streets), or null. */
  reverse(request: ReverseRequest): Promise<AddressSuggestion | null>;
}

/** The provider did not give a usable answer in time (network, timeout, 5xx, garbage). */
export class GeocoderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeocoderUnavailableError';
  }
}
