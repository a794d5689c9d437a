import { createRequire } from 'node:module';
import { type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config.ts';

// Traces (docs/operations.md, "Traces"): a span per API request, the workflow starts and signals
// it makes (Temporal's client interceptor, which passes the span's context to the workflow in the
// start's headers), the workflow's own spans and each activity's (the worker's interceptors,
// workers/main.ts), exported over OTLP/HTTP in JSON. Only when OTEL_EXPORTER_OTLP_ENDPOINT is set:
// otherwise the SDK is not even loaded (only @opentelemetry/api, whose spans are no-ops), and no
// interceptor runs.

/** The attribute that carries the API's request id (X-Request-Id) on the request's span. */
export const REQUEST_ID_ATTRIBUTE = 'valise.request_id';
/** The workspace a request spoke for, once its key is known. */
export const WORKSPACE_ATTRIBUTE = 'valise.workspace_id';

export type Tracing = {
  tracer: Tracer;
  /** For the process's Temporal clients: their starts and signals join the caller's trace. */
  clientInterceptors: ClientInterceptors;
  /**
   * For the worker: workflow spans (the interceptors bundled with the workflows, their spans
   * leaving the sandbox through the `exporter` sink) and a span per activity, each the child of
   * the span that started or scheduled it.
   */
  workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Sends what is buffered, then stops exporting. */
  shutdown: () => Promise<void>;
};

/**
 * Installs the process-wide tracer provider, exporting to `<endpoint>/v1/traces`, as the OTLP
 * specification builds the URL from OTEL_EXPORTER_OTLP_ENDPOINT; null when no endpoint is set.
 */
export async function startTracing(config: Config, serviceName: string): Promise<Tracing | null> {
  const { otlpEndpoint } = config.observability;
  if (!otlpEndpoint) return null;
  const [{ OTLPTraceExporter }, { Resource }, { BatchSpanProcessor }, { NodeTracerProvider }, temporalOtel] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
      import('@temporalio/interceptors-opentelemetry'),
    ]);
  const resource = new Resource({ 'service.name': config.observability.serviceName ?? serviceName });
  const url = new URL('v1/traces', otlpEndpoint.endsWith('/') ? otlpEndpoint : `${otlpEndpoint}/`).href;
  // Batches go out every second: a trace shows up while the operator still looks for it.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 1_000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global provider, AsyncLocalStorage context and W3C propagation the interceptors rely on.
  provider.register();
  const tracer = trace.getTracer('valise');
  const require = createRequire(import.meta.url);
  return {
    tracer,
    clientInterceptors: { workflow: [new temporalOtel.OpenTelemetryWorkflowClientInterceptor({ tracer })] },
    workerOptions: {
      interceptors: {
        workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
        activity: [
          (ctx) => ({
            inbound: new temporalOtel.OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
            outbound: new temporalOtel.OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks: { exporter: temporalOtel.makeWorkflowExporter(spanProcessor, resource) },
    },
    shutdown: () => provider.shutdown(),
  };
}

/** A server span for an API request, named by its method until its route is known. */
export function startRequestSpan(tracing: Tracing, method: string): Span {
  return tracing.tracer.startSpan(`HTTP ${method}`, { kind: SpanKind.SERVER, attributes: { 'http.method': method } });
}

/** Names the span by its route template and records the answer; a 5xx marks it failed. */
export function endRequestSpan(span: Span, answer: { method: string; route: string; status: number }): void {
  span.updateName(`${answer.method} ${answer.route}`);
  span.setAttributes({ 'http.route': answer.route, 'http.status_code': answer.status });
  if (answer.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
