// The default geocoder: the streets, houses and places of the demo city kept in PostgreSQL
// (gazetteer_entries), so address search works offline and in every test.
import type { Executor } from '../../../db/executor.js';
import { nearestGazetteerEntry, searchGazetteer, type GazetteerRow } from '../../../db/queries/logistics.js';
import { boundingBoxAround } from '../../../domain/geo/geometry.js';
import type { AddressSuggestion, Geocoder, ReverseRequest, SuggestRequest } from './types.js';

type EntryFields = Omit<GazetteerRow, 'distance_km'>;

function toSuggestion(row: EntryFields, lang: 'ru' | 'en'): AddressSuggestion {
  return {
    title: lang === 'ru' ? row.title_ru : row.title_en,
    category: row.category,
    location: { lon: row.lon, lat: row.lat },
    place_name: (lang === 'ru' ? row.place_name_ru : row.place_name_en) ?? null,
  };
}

export class GazetteerGeocoder implements Geocoder {
  constructor(private readonly db: Executor) {}

  async suggest({ query, near, limit, lang }: SuggestRequest): Promise<AddressSuggestion[]> {
    const rows = await searchGazetteer(this.db, { query, near, limit, lang });
    return rows.map((row) => toSuggestion(row, lang));
  }

  async reverse({ point, radiusMeters, lang }: ReverseRequest): Promise<AddressSuggestion | null> {
    const radiusKm = radiusMeters / 1000;
    const row = await nearestGazetteerEntry(this.db, point, radiusKm, boundingBoxAround(point, radiusKm));
    return row ? toSuggestion(row, lang) : null;
  }
}
