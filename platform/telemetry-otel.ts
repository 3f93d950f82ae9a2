// OpenTelemetry traces over OTLP/HTTP (JSON), started by scripts/serve.ts when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, before the modules it instruments are imported:
//   - every HTTP request: the http instrumentation's server span, renamed to its operationId, with
//     W3C `traceparent` taken from the caller;
//   - every PostgreSQL query (pg, pg-pool) under the request or pass that issued it;
//   - every outbound provider call (fetch, through undici's diagnostics channel), which passes
//     `traceparent` on to the provider;
//   - every worker pass (Telemetry.inSpan).
// The exporter honours the standard OTEL_* variables (endpoint, headers, timeouts, batch delays).
// Query strings are kept only as parameter names, so no phone, code or token reaches a trace.
import { context, propagation, trace, SpanKind, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { register as registerModuleHooks } from 'import-in-the-middle/register-hooks.mjs';
import { redactTokens } from './logger.js';
import { redactQuery, type Telemetry } from './telemetry.js';

/** Probes and scrapes would drown the requests that matter. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

const URL_ATTRIBUTES = ['url.full', 'http.url', 'http.target', 'url.path', 'url.query'] as const;

/**
 * Rewrites the URL attributes a span was given so that only parameter names of the query remain,
 * and a token pasted into the path is masked as in the logs.
 */
function redactUrlAttributes(span: Span & { attributes?: Record<string, unknown> }): void {
  const attributes = span.attributes ?? {};
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    if (key === 'url.query') {
      span.setAttribute(key, redactQuery(value));
      continue;
    }
    const q = value.indexOf('?');
    const path = redactTokens(q >= 0 ? value.slice(0, q) : value);
    span.setAttribute(key, q >= 0 ? `${path}?${redactQuery(value.slice(q + 1))}` : path);
  }
}

export function startOpenTelemetry(serviceName: string, serviceVersion: string): Telemetry {
  // ESM imports of pg are hooked in-thread (Node >= 26 runs import-in-the-middle's synchronous
  // loader); node:http and undici need no loader hook.
  registerModuleHooks({ include: ['pg', 'pg-pool'] });

  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': serviceName,
      'service.version': serviceVersion,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  trace.setGlobalTracerProvider(provider);

  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
        applyCustomAttributesOnSpan: (span) => redactUrlAttributes(span),
      }),
      // Queries outside a request or a pass (the outbox feed's LISTEN connection) are not traced.
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({
        requireParentforSpans: true,
        responseHook: (span) => redactUrlAttributes(span),
      }),
    ],
  });

  const tracer = trace.getTracer('grocery-service');
  return {
    nameRequest(operationId, route) {
      const span = trace.getActiveSpan();
      if (!span) return;
      span.updateName(operationId);
      span.setAttributes({ 'http.route': route, 'grocery.operation_id': operationId });
    },
    inSpan(name, pass) {
      return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, root: true }, (span) =>
        pass().then(
          (result) => {
            span.end();
            return result;
          },
          (err: unknown) => {
            span.recordException(err as Error);
            span.setStatus({ code: 2, message: (err as Error).message });
            span.end();
            throw err;
          },
        ),
      );
    },
    shutdown: () => provider.shutdown(),
  };
}
