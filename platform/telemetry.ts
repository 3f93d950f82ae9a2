// What the service asks of tracing, so that nothing of OpenTelemetry loads unless it is wanted:
// without OTEL_EXPORTER_OTLP_ENDPOINT the service runs with `noTelemetry`; with it, scripts/serve.ts
// loads platform/telemetry-otel.ts (the SDK and its instrumentations) before anything it instruments.

export interface Telemetry {
  /** Names the current HTTP request's span after its operation (`createOrder`) and route template. */
  nameRequest(operationId: string, route: string): void;
  /** Runs one background pass (a worker's tick) as a span, so its queries and calls hang under it. */
  inSpan<T>(name: string, pass: () => Promise<T>): Promise<T>;
  /** Exports what is buffered; called last on shutdown. */
  shutdown(): Promise<void>;
}

export const noTelemetry: Telemetry = {
  nameRequest() {},
  inSpan: (_name, pass) => pass(),
  shutdown: async () => {},
};

/**
 * The query of a URL with every value replaced: phones, codes and tokens travel in query strings
 * (GET /api/qa/otp/last?phone=, /ws/...?access_token=, a geocoder's access_token) and must not
 * reach a trace. The names stay, so a span still says which parameters were sent.
 */
export function redactQuery(query: string): string {
  return query
    .replace(/^\?/, '')
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=_`)
    .join('&');
}
