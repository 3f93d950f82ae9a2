// Messages of the two WebSocket channels, parsed and held to the spec like HTTP responses:
// TrackingEventEnvelope (customer tracking) and PickerRealtimeEvent (picker app). A message that
// does not match throws in the socket's handler, which fails the test run.
import type { RawData } from 'ws';
import { assertMatchesSchema } from './client.js';

export function trackingMessage(raw: RawData): any {
  const message = JSON.parse((raw as Buffer).toString());
  assertMatchesSchema('TrackingEventEnvelope', message);
  return message;
}

export function pickerMessage(raw: RawData): any {
  const message = JSON.parse((raw as Buffer).toString());
  assertMatchesSchema('PickerRealtimeEvent', message);
  return message;
}
