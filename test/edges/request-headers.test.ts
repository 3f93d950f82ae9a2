// RequestContext.headers is typed per operation from the spec's header parameters (issue 22 item 7):
// lower-case names as Node gives them, values string | undefined. The @ts-expect-error lines are
// the point of this file: `npm run typecheck` fails if one of them compiles.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { declaredHeader, type OperationsWithHeader, type RequestContext, type RequestHeaders } from '../../server/handler-types.js';

describe('request headers typed per operation', () => {
  it('are the declared header parameters, lower-case, string | undefined', () => {
    expectTypeOf<RequestHeaders<'createOrder'>>().toEqualTypeOf<{
      readonly 'accept-language'?: string;
      readonly 'x-store-id'?: string;
      readonly 'idempotency-key'?: string;
    }>();
    expectTypeOf<RequestHeaders<'getProfile'>>().toEqualTypeOf<Record<never, never>>();
    const ctx = { headers: { 'x-store-id': 'store', 'idempotency-key': 'key' } } as RequestContext<'createOrder'>;
    expect(declaredHeader(ctx, 'x-store-id')).toBe('store');
    expect(declaredHeader(ctx, 'accept-language')).toBeUndefined();
  });

  it('make an undeclared or misspelt header a compile error', () => {
    const misspelt = (ctx: RequestContext<'createOrder'>) => [
      // @ts-expect-error misspelt
      ctx.headers['x-store-idd'],
      // @ts-expect-error Node gives lower-case names
      ctx.headers['X-Store-Id'],
    ];
    const undeclared = (ctx: RequestContext<'getProfile'>) => [
      // @ts-expect-error getProfile declares no X-Store-Id
      ctx.headers['x-store-id'],
      // @ts-expect-error nor an Idempotency-Key, so helpers reading it refuse its context
      declaredHeader(ctx, 'idempotency-key'),
    ];
    expect([misspelt, undeclared]).toHaveLength(2);
    expectTypeOf<'createOrder'>().toMatchTypeOf<OperationsWithHeader<'idempotency-key'>>();
    expectTypeOf<'getProfile'>().not.toMatchTypeOf<OperationsWithHeader<'idempotency-key'>>();
  });
});
