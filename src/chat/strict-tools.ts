import { sha256Hex } from '../common/hashing';
import { uncheckableSchema } from '../common/json-schema/checkable-schema';
import type { OutputValidator } from '../common/json-schema/output-validator';
import { argumentsOf, type ToolCallEvent } from '../core/chat-event';
import type { NormalizedTool } from '../core/chat-message';
import { GatewayError } from '../core/gateway.error';
import { quoted } from '../core/quoted';

/** One strict function tool: where it sits in `tools`, its schema and the validator's key for it. */
interface StrictTool {
  readonly index: number;
  readonly name: string;
  readonly schema: Record<string, unknown>;
  readonly key: string;
}

/**
 * The client's `strict: true` function tools, on a family whose upstream does not hold calls to
 * their schemas (its `strictToolsUpstream` is absent): the gateway holds them itself. A schema
 * it cannot check against is a 400 before the queue and any upstream call (`refusal`); a call
 * whose arguments the tool's `parameters` schema refuses is an invalid tool call
 * (ToolCallCollector), so the client never runs a tool on arguments its schema rules out. The
 * schemas are compiled by the structured route's validator, cached by their text. A strict tool
 * without `parameters` takes any object, as it would upstream; a tool that is not strict is not
 * looked at.
 */
export class StrictTools {
  /**
   * Each call's verdict: an answer that may be asked again is read by a scratch collector, or by
   * the tool_choice rule, before the renderer reads the same call objects.
   */
  private readonly verdicts = new WeakMap<ToolCallEvent, boolean>();

  private constructor(
    private readonly tools: ReadonlyMap<string, StrictTool>,
    private readonly validator: OutputValidator,
  ) {}

  /** The request's strict function tools with a schema; undefined when it has none (most requests). */
  static of(tools: readonly NormalizedTool[], validator: OutputValidator): StrictTools | undefined {
    let strict: Map<string, StrictTool> | undefined;
    tools.forEach((tool, index) => {
      if (tool.type !== 'function' || tool.strict !== true || tool.parameters === undefined) return;
      const { name, parameters: schema } = tool;
      strict ??= new Map();
      // The body rules refuse two tools of one name; the first is the one a call would name.
      if (!strict.has(name)) strict.set(name, { index, name, schema, key: sha256Hex(JSON.stringify(schema)) });
    });
    return strict && new StrictTools(strict, validator);
  }

  /** 400 `invalid_request` (`param: "tools"`) naming the first strict tool whose schema cannot be checked against. */
  refusal(): GatewayError | undefined {
    for (const tool of this.tools.values()) {
      const uncheckable = uncheckableSchema(tool.schema, tool.key, this.validator);
      if (uncheckable === undefined) continue;
      const fix = uncheckable.fix ?? 'send a valid schema';
      return new GatewayError('invalid_request', {
        param: 'tools',
        publicMessage:
          `tools.${tool.index} (${quoted(tool.name, 64)}) is strict, and the gateway checks its calls against its ` +
          `parameters schema, which ${uncheckable.problem}; ${fix}, or send the tool without strict (docs/chat.md "Strict tools")`,
        // The words name the tool and the schema's own keys.
        quotesRequest: true,
      });
    }
    return undefined;
  }

  /**
   * Whether a call fits the schema of the tool it names, its arguments read as the client receives
   * them (`argumentsOf`, already known to be the text of a JSON object); true for a custom call and
   * for a tool that is not strict.
   */
  accepts(call: ToolCallEvent): boolean {
    const tool = call.kind === 'function' ? this.tools.get(call.name) : undefined;
    if (tool === undefined) return true;
    let verdict = this.verdicts.get(call);
    if (verdict === undefined) {
      verdict = this.validator.check(tool.key, tool.schema, JSON.parse(argumentsOf(call))).valid;
      this.verdicts.set(call, verdict);
    }
    return verdict;
  }
}
