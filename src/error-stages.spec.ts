import { HttpStatus } from '@nestjs/common';
import type { ArgumentsHost } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';
import express from 'express';
import * as fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as ts from 'typescript';
import { ChunkFactory, ToolCallCollector, writeChatStream } from './chat/chat-completion.renderer';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { markStructuredRoute, rawErrorResponse, streamErrorContent } from './common/errors/error-writer';
import { entryMiddleware, jsonBodyMiddleware, requireHostHeader } from './common/http/http-middleware';
import { KeepAliveSweep } from './common/sse/keep-alive-sweep';
import { SseWriter } from './common/sse/sse-writer';
import type { EventLogger } from './core/event-logger';
import type { ErrorCode } from './core/error-codes';
import { errorSpec, errorTable, structuredHttpStatus } from './core/error-codes';
import { GatewayError } from './core/gateway.error';
import { answerStructuredFailure } from './structured/structured-failure';
import type { StructuredTelemetry } from './structured/structured-telemetry';
import { isProductionTs, sourceFilesBelow } from '../test/support/source-files';
import { sseData } from '../test/support/chat-sse';

/*
 * One error writer (src/common/errors/error-writer.ts) for every route and stage: this spec serves
 * the same GatewayError through each stage that answers errors — the global filter, the structured
 * route's failure path, the HTTP middleware, the raw `clientError` form and the in-stream chunk —
 * and checks they agree with each other and with the error table. Then it checks that no other
 * source file builds an error body.
 */

const silent: EventLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  child: () => silent,
} as unknown as EventLogger;

/** What the structured route recorded for each answer it was asked for: `failed` or `canceled`. */
const recorded: string[] = [];
const telemetry = {
  failed: () => recorded.push('failed'),
  canceled: () => recorded.push('canceled'),
} as unknown as StructuredTelemetry;

/** The error a route below is asked to write: `?code=` of the table, named to a family, with a Retry-After hint. */
function errorOf(request: Request): GatewayError {
  return new GatewayError(String(request.query.code) as ErrorCode, { provider: 'provider_a', retryAfterSeconds: 7 });
}

function hostOf(request: Request, response: Response): ArgumentsHost {
  return { switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }) } as ArgumentsHost;
}

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly shouldRetry: string | null;
  readonly connection: string | null;
  readonly contentType: string | null;
  readonly text: string;
}

describe('every stage writes an error through the one writer', () => {
  let server: Server;
  const keepAlive = new KeepAliveSweep();
  let base: string;

  beforeAll(async () => {
    const app = express();
    const filter = new AllExceptionsFilter(silent);
    // The global filter (an exception thrown by a guard, a controller or Nest's router).
    app.get('/filter', (request, response) => {
      filter.catch(errorOf(request), hostOf(request, response));
      endIfNothingWritten(response);
    });
    // The structured route's failure path (its failure answer, for the filter, and its controller).
    app.get('/structured', markStructuredRoute(), (request, response) => {
      answerStructuredFailure(request, response, errorOf(request), false, telemetry);
      endIfNothingWritten(response);
    });
    // The HTTP middleware's own rejections.
    const ok: RequestHandler = (_request, response) => response.end('ok');
    app.post('/body', jsonBodyMiddleware(64), ok);
    app.get('/host', entryMiddleware([requireHostHeader]), ok);
    // A stream whose turn fails after the headers went out.
    app.get('/stream', (request, response) => {
      async function* events() {
        yield { type: 'text-delta' as const, text: 'partial' };
        yield { type: 'error' as const, error: errorOf(request) };
      }
      void writeChatStream(
        new SseWriter(response, keepAlive),
        events(),
        new ChunkFactory('gpt-5.6-sol'),
        new ToolCallCollector('req-1', 'function'),
        { includeUsage: false, signal: new AbortController().signal },
      );
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    keepAlive.onModuleDestroy();
    return new Promise((resolve) => server.close(resolve));
  });

  async function answer(pathname: string, init?: RequestInit): Promise<Answer> {
    const response = await fetch(`${base}${pathname}`, init);
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      shouldRetry: response.headers.get('x-should-retry'),
      connection: response.headers.get('connection'),
      contentType: response.headers.get('content-type'),
      text: await response.text(),
    };
  }

  /** The raw `clientError` form, read back as an answer. */
  function rawAnswer(error: GatewayError): Answer {
    const text = rawErrorResponse(error, 'id').bytes.toString('latin1');
    const [head, body] = text.split('\r\n\r\n');
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? null;
    return {
      status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]),
      retryAfter: header('Retry-After'),
      shouldRetry: header('x-should-retry'),
      connection: header('Connection'),
      contentType: header('Content-Type'),
      text: body,
    };
  }

  /** What the harness answers when a stage wrote nothing (an error never sent: `canceled`). */
  const NOTHING_WRITTEN = 204;
  function endIfNothingWritten(response: Response): void {
    if (!response.headersSent) response.status(NOTHING_WRITTEN).end();
  }

  it.each([...errorTable().keys()])(
    '%s: the filter, the raw form, the structured route and the stream chunk agree with the table',
    async (code) => {
      const spec = errorSpec(code);
      const error = new GatewayError(code, { provider: 'provider_a', retryAfterSeconds: 7 });
      const filtered = await answer(`/filter?code=${code}`);
      recorded.length = 0;
      const structured = await answer(`/structured?code=${code}`);
      const stream = await answer(`/stream?code=${code}`);
      const raw = rawAnswer(error);

      // Never sent (docs/error-codes.md): the client it would go to has left.
      if (code === 'canceled') {
        expect([filtered.status, structured.status]).toEqual([NOTHING_WRITTEN, NOTHING_WRITTEN]);
        // Recorded as a client that left, not as a failure.
        expect(recorded).toEqual(['canceled']);
        return;
      }
      // The OpenAI form: the table's status, type and code; the family's message; byte-equal on the socket.
      const body = JSON.parse(filtered.text) as { error: { message: string; type: string; code: string } };
      expect({ status: filtered.status, type: body.error.type, code: body.error.code }).toEqual({
        status: spec.status,
        type: spec.type,
        code: spec.openaiCode,
      });
      const waits = spec.status === 429 || spec.status === 503;
      // 7 s is within the minute clients wait out by themselves: they may retry. Any other 4xx
      // but 408 is met again by the same request; a 5xx is left to the client.
      const shouldRetry = (status: number) =>
        status === 429 || status === 503 || status === 408 ? 'true' : status >= 400 && status < 500 ? 'false' : null;
      expect(filtered).toMatchObject({
        retryAfter: waits ? '7' : null,
        shouldRetry: shouldRetry(spec.status),
        contentType: 'application/json; charset=utf-8',
      });
      expect(raw).toEqual({ ...filtered, connection: 'close' });

      // A request no route took is answered in the OpenAI shape on the structured path too.
      if (spec.openaiShapeOnly) {
        expect(structured).toEqual(filtered);
        expect(structuredHttpStatus(spec)).toBe(spec.status);
      } else {
        // The structured form: the contract's code and status, the same message.
        const contract = JSON.parse(structured.text) as { error: { code: string; message: string } };
        expect({ status: structured.status, code: contract.error.code, message: contract.error.message }).toEqual({
          status: structuredHttpStatus(spec),
          code: spec.structuredCode,
          message: body.error.message,
        });
        const structuredWaits = structured.status === 429 || structured.status === 503;
        expect({ retryAfter: structured.retryAfter, shouldRetry: structured.shouldRetry }).toEqual({
          retryAfter: structuredWaits ? '7' : null,
          // A 5xx the contract gives a refusal of the request itself is met again too.
          shouldRetry:
            structured.status >= 500 && !structuredWaits && spec.status >= 400 && spec.status < 500
              ? 'false'
              : shouldRetry(structured.status),
        });
      }

      // After the headers: HTTP 200, the table's stream text in one error chunk, then [DONE].
      const data = sseData(stream.text);
      const last = JSON.parse(data.at(-2)!) as { choices: { delta: unknown; finish_reason: string }[] };
      expect(stream.status).toBe(200);
      expect(last.choices[0]).toMatchObject({
        delta: { content: `[error: ${spec.streamText}]` },
        finish_reason: 'stop',
      });
      expect(streamErrorContent(error)).toBe(`[error: ${spec.streamText}]`);
      expect(data.at(-1)).toBe('[DONE]');
    },
  );

  it("writes the middleware's own rejections exactly as the filter writes the same error", async () => {
    const sameAsFilter = async (middleware: Answer, error: GatewayError) => {
      const route = express();
      const filter = new AllExceptionsFilter(silent);
      route.get('/', (request, response) => filter.catch(error, hostOf(request, response)));
      const other = route.listen(0, '127.0.0.1');
      await new Promise((resolve) => other.once('listening', resolve));
      try {
        const response = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
        expect(middleware).toMatchObject({ status: response.status, text: await response.text() });
      } finally {
        await new Promise((resolve) => other.close(resolve));
      }
    };
    const post = (body: string) =>
      answer('/body', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const overCap = new GatewayError('request_too_large', {
      publicMessage: 'the request body is larger than 64 bytes',
    });
    await sameAsFilter(await post(JSON.stringify({ pad: 'x'.repeat(100) })), overCap);
    await sameAsFilter(
      await post('{"a":'),
      new GatewayError('invalid_request', { publicMessage: 'the request body is not valid JSON' }),
    );
    // The raw form of the same error is byte-equal too (Node's parser refusing an oversized chunk extension).
    const tooLarge = await post(JSON.stringify({ pad: 'x'.repeat(100) }));
    expect(rawAnswer(overCap)).toMatchObject({
      status: tooLarge.status,
      text: tooLarge.text,
    });
  });
});

// ── No other writer ─────────────────────────────────────────────────────────────────────────

const SRC = __dirname;

/** The files allowed to build what a client receives as an error: the writer, and the table it reads. */
const WRITER_FILES = new Set(['common/errors/error-writer.ts', 'core/error-codes.ts']);

/**
 * Error statuses written outside the writer that are not errors of the table, with the reason.
 * Anything added here needs the same kind of reason.
 */
const NOT_ERRORS = new Set([
  // Readiness answers 503 {"status":"draining"}: the contract's readiness document, not an error body.
  'health/health.controller.ts: status(HttpStatus.SERVICE_UNAVAILABLE)',
]);

/** Calls that put a value on the wire (or turn it into the text that goes there). */
const WRITING_CALLS = new Set(['json', 'send', 'end', 'write', 'sendJson', 'stringify']);

/**
 * What in `text` builds or writes an error for a client: an `{ error: {…} }` body, the table's
 * wire fields (`openaiCode`, `streamText`), the `[error: …]` chunk, a raw HTTP response head, a
 * Retry-After, x-should-retry or `Connection: close` header, or an error status set on a response. Read from the
 * syntax tree, so comments do not count and reading an upstream's `headers['retry-after']` is not
 * writing one.
 */
function errorWritesIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${file}:${line} ${what}`);
  };
  const isErrorStatus = (node: ts.Expression | undefined): string | undefined => {
    if (node === undefined) return undefined;
    if (ts.isNumericLiteral(node) && Number(node.text) >= 400) return node.text;
    if (
      ts.isPropertyAccessExpression(node) &&
      node.expression.getText(source) === 'HttpStatus' &&
      (HttpStatus as unknown as Record<string, number>)[node.name.text] >= 400
    )
      return node.getText(source);
    return undefined;
  };
  const nameOf = (name: ts.PropertyName) => name.getText(source).replace(/['"]/g, '');
  const isWritten = (literal: ts.ObjectLiteralExpression) =>
    ts.isCallExpression(literal.parent) &&
    ts.isPropertyAccessExpression(literal.parent.expression) &&
    WRITING_CALLS.has(literal.parent.expression.name.text);
  const visit = (node: ts.Node): void => {
    // `{ error: {…} }` anywhere, and `{ error }` / `{ error: value }` handed to something that writes.
    if (
      (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
      nameOf(node.name) === 'error' &&
      ts.isObjectLiteralExpression(node.parent) &&
      !node.parent.properties.some((sibling) => sibling.name !== undefined && nameOf(sibling.name) === 'type') &&
      ((ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.initializer)) || isWritten(node.parent))
    )
      report(node, 'builds an { error: … } body');
    if (ts.isPropertyAccessExpression(node) && ['openaiCode', 'streamText'].includes(node.name.text))
      report(node, `reads the table's wire field ${node.name.text}`);
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const value = node.text;
      if (value.includes('[error:')) report(node, 'writes an [error: …] chunk');
      if (/HTTP\/1\.[01] (\d|$)/.test(value)) report(node, 'writes a raw HTTP response head');
      if (/^(?:retry-after|x-should-retry)$/i.test(value) && !ts.isElementAccessExpression(node.parent))
        report(node, `writes a ${value} header`);
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const status = isErrorStatus(node.arguments[0]);
      if ((method === 'status' || method === 'sendStatus' || method === 'writeHead') && status !== undefined)
        report(node, `${method}(${status})`);
      const [name, value] = node.arguments;
      if (
        method === 'setHeader' &&
        name !== undefined &&
        ts.isStringLiteralLike(name) &&
        /^connection$/i.test(name.text) &&
        value !== undefined &&
        ts.isStringLiteralLike(value) &&
        /^close$/i.test(value.text)
      )
        report(node, 'writes Connection: close');
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      node.left.name.text === 'statusCode' &&
      isErrorStatus(node.right) !== undefined
    )
      report(node, `statusCode = ${node.right.getText(source)}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('no file but the error writer builds an error answer', () => {
  it('finds no error body, wire field, error chunk, raw head, Retry-After, x-should-retry or error status outside the writer', () => {
    const offenders = sourceFilesBelow(SRC, isProductionTs)
      .map((file) => path.relative(SRC, file).split(path.sep).join('/'))
      .filter((file) => !WRITER_FILES.has(file))
      .flatMap((file) => errorWritesIn(file, fs.readFileSync(path.join(SRC, file), 'utf8')))
      .filter((finding) => !NOT_ERRORS.has(finding.replace(/:\d+ /, ': ')));
    expect(offenders).toEqual([]);
  });

  it('catches each kind of writer, and not comments, upstream reads or chat error events', () => {
    const offending = [
      "response.json({ error: { message: 'no', type: 't', code: 'c', param: null } });",
      'response.status(413).end();',
      'response.json({ error });',
      "const body = { error: { code: 'x', message: 'y' } };",
      'const text = failure.spec.streamText;',
      'const code = spec.openaiCode;',
      'writer.sendJson({ content: `[error: ${text}]` });',
      'socket.end(`HTTP/1.1 ${status} Bad\\r\\n`);',
      "response.setHeader('Retry-After', '5');",
      "response.setHeader('x-should-retry', 'false');",
      "response.setHeader('Connection', 'close');",
      'response.statusCode = 502;',
      'response.writeHead(HttpStatus.BAD_GATEWAY);',
    ];
    for (const line of offending)
      expect({ line, found: errorWritesIn('x.ts', line) }).toEqual({ line, found: [expect.any(String)] });
    const harmless = [
      '// the in-stream `[error: …]` chunk and a raw HTTP/1.1 head, Retry-After',
      "const hint = headers['retry-after'];",
      "yield { type: 'error', error: new GatewayError('upstream') };",
      "events.push({ type: 'error', error });",
      'this.failure = { error };',
      "response.status(200).json({ status: 'ready' });",
      "response.setHeader('Connection', 'keep-alive');",
      "const event = { type: 'error', error: { code: 'x' } };",
    ];
    for (const line of harmless) expect({ line, found: errorWritesIn('x.ts', line) }).toEqual({ line, found: [] });
  });
});
