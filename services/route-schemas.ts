/**
 * Route JSON schemas: they validate requests (bodies closed, unknown fields
 * refused) and produce the OpenAPI document at /docs/json.
 */
import type {} from '@fastify/swagger';
import { ERROR_RESPONSE_SCHEMA } from './http-errors.ts';
import { DEFAULT_EVENT_DETAIL, EVENT_DETAILS } from './response-events.ts';

/** Session ids and call ids: nothing outside this set ever reaches a file name. */
export const ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';

const id = (description: string) => ({ type: 'string', pattern: ID_PATTERN, description }) as const;
const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ERROR_RESPONSE_SCHEMA]));

const looseObject = { type: 'object', additionalProperties: true } as const;

const CALL_RESPONSE = {
  type: 'object',
  required: ['callId', 'sessionId', 'isError', 'content', 'events', 'stats'],
  properties: {
    callId: { type: 'string' },
    sessionId: { type: 'string' },
    isError: { type: 'boolean' },
    value: { description: 'The canonical value (absent on failure). For run_code: {logs, result?}.' },
    content: { type: 'array', items: looseObject, description: 'What a model reads: MCP content blocks.' },
    error: {
      type: 'object',
      additionalProperties: true,
      properties: {
        message: { type: 'string' },
        info: {
          type: 'object',
          additionalProperties: true,
          description: 'The failure as fields (docs/errors.md): read these, never the message.',
          properties: {
            name: { type: 'string' },
            code: { type: 'string' },
            kind: { type: 'string', description: 'CODE_RUN_FAILED: syntax, typecheck, exception, timeout, memory, busy, …' },
            line: { type: 'integer', description: "CODE_RUN_FAILED: 1-based line in the program, when known." },
            column: { type: 'integer', description: 'CODE_RUN_FAILED: 1-based column in the program, when known.' },
            toolName: { type: 'string', description: 'CODE_RUN_FAILED from an uncaught ToolCallError: the nested tool that failed.' },
            callId: { type: 'string', description: 'CODE_RUN_FAILED from an uncaught ToolCallError: the nested call.' },
          },
        },
      },
    },
    meta: { description: 'Presentation metadata (direct tool calls only).' },
    paused: {
      type: 'object',
      additionalProperties: true,
      description: 'Present when the run paused for approval: { callId, pending: [{ seq, toolName, args }], expiresAt }; decide it with POST /v1/runs/:callId/decision.',
    },
    events: {
      type: 'array',
      items: looseObject,
      description:
        "This call's durable events, in order. POST /v1/run: as `?events=` asks: `summary` (default) gives each event's type, sessionId, seq, at, callId, rootCallId, parentCallId, name and isError, without content, arguments or errors (GET /v1/sessions/:id/events has them); `full` the whole events; `none` an empty list.",
    },
    contexts: {
      type: 'array',
      description:
        'Context the call produced for the next model request (put it in front of that request): first what tools injected with exec.agent.inject, in order (each also an agent/context event), then what post-execute hooks attached to the result and, for run_code, to its nested calls. Capped like the events. Absent when there is none.',
      items: {
        type: 'object',
        required: ['via', 'content'],
        properties: {
          via: { type: 'string', enum: ['inject', 'hook'], description: '`inject`: a tool called exec.agent.inject; `hook`: a post-execute hook attached it.' },
          content: { type: 'array', items: looseObject, description: 'MCP content blocks.' },
          source: { type: 'string', description: 'inject: the plugin that injected; hook: the label the hook gave, if any.' },
          callId: { type: 'string', description: 'inject: the call that injected (the run or one of its nested calls).' },
        },
      },
    },
    stats: {
      type: 'object',
      description:
        "The call's wall time and nested calls; for a run, also how close it came to each limit and where its nested calls spent their time (the model's content does not show these).",
      properties: {
        wallMs: { type: 'number', description: 'Wall time of the call, ms.' },
        calls: { type: 'integer', description: 'Nested tool calls the program made (for a run: counted against maxCalls).' },
        maxCalls: { type: 'integer', description: 'Run: the limit on nested calls.' },
        heapPeakBytes: {
          type: 'integer',
          description: "Run: the isolate's committed heap when the program ended, bytes. Absent when the run ended with its isolate disposed (timeout, memory, a limit, cancellation).",
        },
        heapLimitBytes: { type: 'integer', description: 'Run: the heap the isolate may reach (memoryMiB and its young generation), bytes; with heapPeakBytes.' },
        logBytes: { type: 'integer', description: 'Run: bytes of log lines counted against maxLogBytes.' },
        maxLogBytes: { type: 'integer', description: 'Run: the limit on log bytes; past it later lines are dropped.' },
        resultBytes: { type: 'integer', description: "Run: bytes of the returned value's JSON (also when over the limit); 0 when nothing was returned." },
        maxResultBytes: { type: 'integer', description: "Run: the limit on the returned value's JSON." },
        nestedCalls: {
          type: 'array',
          description: 'Run: each nested call it dispatched, in submission order.',
          items: {
            type: 'object',
            properties: {
              callId: { type: 'string' },
              name: { type: 'string' },
              isError: { type: 'boolean' },
              startMs: { type: 'number', description: 'When it started, ms after the run began: its place on the run\'s time axis.' },
              queuedMs: { type: 'number', description: 'From the program submitting the call to its start (waiting for its turn), ms.' },
              executeMs: { type: 'number', description: 'From its start to its result being ready for the program (body, output, commit order, hooks), ms.' },
              bytes: { type: 'integer', description: "UTF-8 bytes of the value's JSON the program received; 0 for a failed call." },
            },
          },
        },
      },
    },
    eventsLost: {
      type: 'object',
      description:
        'Present when some of the session\'s events could not be stored while the call ran (a full disk, a quota, a failing database): `events` then lists events the session log lacks.',
      properties: {
        code: { type: 'string', enum: ['EVENT_LOG_FAILED'] },
        reason: { type: 'string', description: 'The system error (`ENOSPC`, `EROFS`, …) or `BACKLOG_FULL`.' },
        message: { type: 'string' },
      },
    },
  },
} as const;

export const RUN_SCHEMA = {
  summary: 'Run a program (run_code)',
  description:
    'Runs `code` as the body of an async function with `tools.<name>(args)` in scope. A failing program is still a 200 with `isError: true`. With `Accept: text/event-stream` the response is SSE: `ptc-dispatch-start`, `ptc-dispatch`, `context` (each agent/context event), `log` (each console line), then `result` (this body). Closing the connection cancels the run.',
  tags: ['runs'],
  querystring: {
    type: 'object',
    properties: {
      events: {
        type: 'string',
        enum: [...EVENT_DETAILS],
        default: DEFAULT_EVENT_DETAIL,
        description: 'How much of the call\'s events the response carries: `summary` (default; ids, names, isError and times), `full` (content too) or `none`.',
      },
    },
  },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['code'],
    properties: {
      code: { type: 'string', minLength: 1, description: 'The program (TypeScript or JavaScript).' },
      description: { type: 'string', maxLength: 1000, description: 'What the program does, for logs and events. Default "HTTP run".' },
      sessionId: id('Session whose event log receives the events. Default "default".'),
      callId: id('Id of this run (for DELETE /v1/runs/:callId). Default: a random UUID.'),
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000, description: 'Wall-time limit, ms. Default: the server limit (30,000).' },
    },
  },
  response: { 200: CALL_RESPONSE, ...errors(400, 401, 409, 413, 415, 429, 503, 507) },
} as const;

export const TOOL_CALL_SCHEMA = {
  summary: 'Call one tool directly',
  description: 'One outer dispatch; presentationMeta and spill apply. In `code` mode only run_code is directly callable.',
  tags: ['tools'],
  params: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 256 } }, required: ['name'] },
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      arguments: { type: 'object', description: 'The tool arguments. Default {}.' },
      sessionId: id('Default "default".'),
      callId: id('Default: a random UUID.'),
    },
  },
  response: { 200: CALL_RESPONSE, ...errors(400, 401, 409, 413, 415, 429, 503, 507) },
} as const;

export const CANCEL_SCHEMA = {
  summary: 'Cancel a running call',
  tags: ['runs'],
  params: { type: 'object', properties: { callId: id('The callId of a running call.') }, required: ['callId'] },
  response: {
    202: { type: 'object', properties: { callId: { type: 'string' }, cancelled: { type: 'boolean' } } },
    ...errors(400, 401, 404),
  },
} as const;

export const RUN_STATUS_SCHEMA = {
  summary: 'Where a call runs and how it ended',
  description:
    'Any replica answers: with a database the runs table is shared; without one, the replica knows its own recent runs. `lost`: the replica running it stopped heartbeating; its session log ends with a failed `tool/result` (code RUN_LOST). `paused`: the run waits for a decision on `pending` (POST /v1/runs/:callId/decision).',
  tags: ['runs'],
  params: { type: 'object', properties: { callId: id('The callId of a call.') }, required: ['callId'] },
  response: {
    200: {
      type: 'object',
      required: ['callId', 'sessionId', 'state', 'replica', 'startedAt'],
      properties: {
        callId: { type: 'string' },
        sessionId: { type: 'string' },
        state: { type: 'string', enum: ['running', 'ok', 'failed', 'cancelled', 'lost', 'paused'] },
        pending: {
          type: 'array',
          description: 'When `paused`: the calls waiting for a decision.',
          items: { type: 'object', properties: { seq: { type: 'integer' }, toolName: { type: 'string' }, args: {} } },
        },
        expiresAt: { type: 'string', description: 'When `paused`: after this time a decision denies the call with reason `expired`.' },
        replica: { type: 'string' },
        startedAt: { type: 'string' },
        endedAt: { type: 'string' },
      },
    },
    ...errors(400, 401, 404, 503),
  },
} as const;

export const EVENTS_SCHEMA = {
  summary: "Read a session's durable events",
  tags: ['sessions'],
  params: { type: 'object', properties: { id: id('The session id.') }, required: ['id'] },
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      after: { type: 'integer', minimum: 0, default: 0, description: 'Only events with a greater seq (pass the previous page\'s `next`).' },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Events per page (at most 1,000; a page also stops at 8 MiB of events).' },
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        events: { type: 'array', items: looseObject },
        next: { type: 'integer', description: 'Pass as `after` for the next page; absent at the end of the log.' },
        damage: {
          type: 'object',
          description: 'Present when the log is damaged after the events served: nothing past it is served.',
          properties: { offset: { type: 'integer' }, afterSeq: { type: 'integer' }, message: { type: 'string' } },
        },
      },
    },
    ...errors(400, 401, 503),
  },
} as const;

export const TOOLS_SCHEMA = {
  summary: 'List the tools (model-visible schemas)',
  tags: ['tools'],
  response: { 200: { type: 'object', properties: { tools: { type: 'array', items: looseObject } } }, ...errors(401) },
} as const;

export const TYPINGS_SCHEMA = {
  summary: 'The TypeScript declarations the model is shown',
  description: 'text/plain; supports ETag / If-None-Match (304).',
  tags: ['tools'],
  produces: ['text/plain'],
} as const;

export const PROMPT_SCHEMA = {
  summary: 'The model-facing instructions and typings (markdown)',
  tags: ['tools'],
  produces: ['text/markdown'],
} as const;

export const PROBE_SCHEMA = {
  tags: ['health'],
  response: { 200: { type: 'object', properties: { status: { type: 'string' } } }, ...errors(503) },
} as const;

const PENDING_CALL = {
  type: 'object',
  properties: { seq: { type: 'integer', description: 'The call\'s submission number in its run.' }, toolName: { type: 'string' }, args: { description: 'Its arguments.' } },
} as const;

export const APPROVALS_SCHEMA = {
  summary: 'List the paused runs waiting for a decision',
  description: "The caller's tenant's runs only, oldest pause first; expired ones are left out (a decision on one denies its call with reason `expired`).",
  tags: ['runs'],
  response: {
    200: {
      type: 'object',
      properties: {
        approvals: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              callId: { type: 'string' },
              sessionId: { type: 'string' },
              description: { type: 'string', description: "The program's one-line description." },
              pending: { type: 'array', items: PENDING_CALL },
              pausedAt: { type: 'string' },
              expiresAt: { type: 'string' },
            },
          },
        },
      },
    },
    ...errors(401, 500),
  },
} as const;

export const DECISION_SCHEMA = {
  summary: 'Approve or deny the gated call of a paused run, and resume it',
  description:
    'Answers like POST /v1/run (JSON, or SSE with `Accept: text/event-stream`): the resumed run replays its journal, runs the approved call (a denied one throws APPROVAL_DENIED in the program) and goes on; its result may be paused again. 404 unknown run (or another tenant\'s), 409 RUN_NOT_PAUSED when it is not waiting for a decision (of two concurrent decisions, one resumes the run and the other gets 409).',
  tags: ['runs'],
  params: { type: 'object', properties: { callId: id('The callId of a paused run.') }, required: ['callId'] },
  body: {
    type: 'object',
    required: ['decision'],
    additionalProperties: false,
    properties: {
      decision: { type: 'string', enum: ['approve', 'deny'] },
      reason: { type: 'string', maxLength: 2000, description: 'Why; a denial shows it to the program.' },
      by: { type: 'string', maxLength: 200, description: "Who decided. Default: the tenant's name, if any." },
    },
  },
  response: { 200: CALL_RESPONSE, ...errors(400, 401, 404, 409, 413, 415, 429, 500, 503) },
} as const;

export const ROLLBACK_SCHEMA = {
  summary: "Revert a paused or resumed run's applied calls",
  description: 'Calls each applied call\'s `revert`, newest first; reports those it could not revert (no `revert`, or it threw). 409 RUN_NOT_PAUSED when the run is resuming or already rolled back.',
  tags: ['runs'],
  params: { type: 'object', properties: { callId: id('The callId of a run that paused.') }, required: ['callId'] },
  response: {
    200: {
      type: 'object',
      properties: {
        callId: { type: 'string' },
        reverted: { type: 'array', items: { type: 'object', properties: { seq: { type: 'integer' }, toolName: { type: 'string' } } } },
        notReverted: {
          type: 'array',
          items: { type: 'object', properties: { seq: { type: 'integer' }, toolName: { type: 'string' }, reason: { type: 'string' } } },
        },
      },
    },
    ...errors(400, 401, 404, 409, 500),
  },
} as const;
