// The package's entry for TypeScript consumers: a typed client of the service, generated from the
// contract (openapi-fetch over the openapi-typescript types in generated/). Paths, parameters,
// bodies and responses are checked by the compiler against the spec of the chosen environment:
//
//   import { createGroceryClient } from 'grocery-service';
//   const api = createGroceryClient({ baseUrl: 'https://api.grocery.example', accessToken: () => session.access });
//   const { data, error } = await api.GET('/api/accounts/me/');
//
// The PROD contract is the default: a TEST-only operation (QA tools, the newer variants) is then a
// compile error. `env: 'TEST'` types the client with the TEST contract.
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths as ProdPaths } from './generated/api.prod.js';
import type { components, operations, paths as TestPaths } from './generated/api.test.js';

export type { ProdPaths, TestPaths, components, operations };
export type { Client, Middleware } from 'openapi-fetch';

export type GroceryEnvironment = 'TEST' | 'PROD';
/** The paths of an environment's contract. */
export type PathsOf<E extends GroceryEnvironment> = E extends 'TEST' ? TestPaths : ProdPaths;
/** A schema of the contract by its name: `Schema<'ProfileSchema'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

type Maybe<T> = T | null | undefined;

export interface GroceryClientOptions<E extends GroceryEnvironment = 'PROD'> extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service is, without a trailing `/api` (e.g. `https://api.grocery.example`). */
  baseUrl: string;
  /** Which contract types the client; only the types change, the requests are the same. */
  env?: E;
  /**
   * Sent as `Authorization: Bearer <token>` unless a request sets its own Authorization. A function
   * is asked before every request, so a token refreshed elsewhere is picked up at once.
   */
  accessToken?: string | (() => Maybe<string> | Promise<Maybe<string>>);
  /** Sent as `X-Store-Id` unless a request sets its own. */
  storeId?: string;
  /** Sent as `Accept-Language` unless a request sets its own. */
  language?: 'ru' | 'en';
}

/** A client of the service, typed by the PROD contract (or the TEST one with `env: 'TEST'`). */
export function createGroceryClient<E extends GroceryEnvironment = 'PROD'>(options: GroceryClientOptions<E>): Client<PathsOf<E>> {
  const { env: _env, accessToken, storeId, language, ...clientOptions } = options;
  const client = createClient<PathsOf<E>>(clientOptions);
  client.use(defaultHeaders({ accessToken, storeId, language }));
  return client;
}

function defaultHeaders({
  accessToken,
  storeId,
  language,
}: Pick<GroceryClientOptions, 'accessToken' | 'storeId' | 'language'>): Middleware {
  return {
    async onRequest({ request }) {
      if (accessToken !== undefined && !request.headers.has('authorization')) {
        const token = typeof accessToken === 'function' ? await accessToken() : accessToken;
        if (token) request.headers.set('authorization', `Bearer ${token}`);
      }
      if (storeId && !request.headers.has('x-store-id')) request.headers.set('x-store-id', storeId);
      if (language && !request.headers.has('accept-language')) request.headers.set('accept-language', language);
      return request;
    },
  };
}
