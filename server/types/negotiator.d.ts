// The part of negotiator (express's own content negotiator, via `accepts`) the service uses;
// the package ships no types.
declare module 'negotiator' {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /** The provided languages the request accepts, best first (RFC 9110 q-values). */
    languages(available?: string[]): string[];
  }
}
