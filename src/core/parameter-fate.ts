/*
 * The vocabulary of request-parameter fates: what happens to a Chat Completions request field on
 * one family. The shared table (src/chat/chat-parameters.ts) holds each field's rules and the
 * fates that are the same on every family; each family declares its own fate for the fields listed
 * in PER_FAMILY_FIELDS (`Family.parameters`, in its folder), so the chat layer names no family.
 */

/** What happens to a field on one family. */
export type FateKind =
  /** The upstream does it; the note says with which upstream field or flag. */
  | 'honoured'
  /** The gateway does it itself (e.g. cutting the stream at a stop sequence). */
  | 'enforced'
  /** Accepted and not acted on, because it cannot change the answer (or is documented why not). */
  | 'ignored'
  /** A value that asks for something (the note says which) is answered 400 naming the field. */
  | 'refused';

export const FATE_KINDS: readonly FateKind[] = ['honoured', 'enforced', 'ignored', 'refused'];

export interface Fate {
  readonly fate: FateKind;
  /** How (honoured, enforced), why (ignored) or which values (refused): the doc's cell. */
  readonly note: string;
}

export const honoured = (note: string): Fate => ({ fate: 'honoured', note });
export const enforced = (note: string): Fate => ({ fate: 'enforced', note });
export const ignored = (note: string): Fate => ({ fate: 'ignored', note });
export const refused = (note: string): Fate => ({ fate: 'refused', note });

/**
 * The request fields whose fate each family declares itself, in the shared table's order; every
 * other field has one fate on every family, in the shared table. The chat layer checks that the
 * two agree, and that a family declares exactly these, when it first reads that family's fates.
 */
export const PER_FAMILY_FIELDS = [
  'messages',
  'frequency_penalty',
  'max_tokens',
  'max_completion_tokens',
  'parallel_tool_calls',
  'presence_penalty',
  'reasoning_effort',
  'response_format',
  'seed',
  'service_tier',
  'stop',
  'store',
  'temperature',
  'tool_choice',
  'tools',
  'top_p',
  'verbosity',
  'faithful',
] as const;

export type PerFamilyField = (typeof PER_FAMILY_FIELDS)[number];

/** A family's fate for every per-family field: a forgotten field is a compile error in its declaration. */
export type FamilyParameters = Readonly<Record<PerFamilyField, Fate>>;

/**
 * Part of the `store` cell (and of other rows' shared notes): the gateway keeps nothing, so a
 * field about stored completions cannot change the answer.
 */
export const NOTHING_STORED =
  "the gateway stores nothing and the upstream login is the user's own; it cannot change the answer";
