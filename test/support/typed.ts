// Typed requests in the shape the tests assert on: `call(svc.client.api.POST('/api/...', {...}))`
// sends through the typed client (path, query and body checked against the spec's types at compile
// time, the response against the spec at run time) and answers like `raw` did: status, headers and
// the parsed body (the success data, or the error body otherwise; undefined when there is none).

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON body: openapi-fetch's `data` on success, `error` otherwise; undefined when empty. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read either shape, as with raw()
  body: any;
  /** The URL asked (names the request in assertion messages). */
  url: string;
}

export async function call(request: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<Answer> {
  const { data, error, response } = await request;
  // openapi-fetch reads an empty error body as '' (raw() gave undefined).
  const body = data !== undefined ? data : error === '' ? undefined : error;
  return { status: response.status, headers: response.headers, body, url: response.url };
}
