/**
 * The chat body validation as it was written with class-validator/class-transformer, kept only
 * as the oracle of src/chat/chat-request.parser.spec.ts: the hand-written validator that replaced
 * it (because this one walked every message through two reflection-driven libraries) must reject
 * exactly the same bodies with exactly the same message.
 */
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  ValidateBy,
  ValidateNested,
  ValidationOptions,
} from 'class-validator';
import { isJsonObject } from '../../src/common/json';

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** A class-validator decorator from a predicate; `undefined` (field absent) always passes. */
function satisfies(name: string, predicate: (value: unknown) => boolean, message: string) {
  return (options?: ValidationOptions) =>
    ValidateBy(
      {
        name,
        validator: {
          validate: (value: unknown) => value === undefined || predicate(value),
          defaultMessage: () => message,
        },
      },
      options,
    );
}

/** `content`: a string, an array of parts, or null (docs/chat.md "Request"). */
const IsMessageContent = satisfies(
  'isMessageContent',
  (value) =>
    value === null ||
    typeof value === 'string' ||
    (Array.isArray(value) && value.every((part) => typeof part === 'object' && part !== null)),
  '$property must be a string, an array of content parts, or null',
);

/** `tool_choice`: `auto`, `none`, `required`, or an object naming a tool. */
const IsToolChoice = satisfies(
  'isToolChoice',
  (value) => typeof value === 'string' || isJsonObject(value),
  '$property must be "auto", "none", "required" or an object naming a tool',
);

const IsArrayOfObjects = satisfies(
  'isArrayOfObjects',
  (value) => Array.isArray(value) && value.every(isJsonObject),
  '$property must be an array of objects',
);

export class ChatMessageDto {
  @IsIn(CHAT_ROLES, { message: '$property must be one of system, developer, user, assistant, tool' })
  role!: string;

  @IsMessageContent()
  content?: unknown;

  @IsOptional()
  @IsArrayOfObjects()
  tool_calls?: Record<string, unknown>[];

  @IsOptional()
  @IsString()
  tool_call_id?: string;
}

/**
 * The fields the gateway interprets. Everything else a client sends (sampling fields,
 * `max_output_tokens`, vendor extensions) is ignored, never rejected (docs/chat.md "Request").
 */
export class ChatCompletionRequestDto {
  @IsOptional()
  @IsString()
  model?: string;

  @IsArray()
  @ArrayNotEmpty({ message: 'messages must contain at least one message' })
  @ValidateNested()
  @Type(() => ChatMessageDto)
  messages!: ChatMessageDto[];

  @IsOptional()
  @IsBoolean()
  stream?: boolean;

  @IsOptional()
  @IsObject()
  stream_options?: { include_usage?: unknown };

  @IsOptional()
  @IsArrayOfObjects()
  tools?: Record<string, unknown>[];

  @IsToolChoice()
  tool_choice?: unknown;

  @IsOptional()
  @IsBoolean()
  parallel_tool_calls?: boolean;

  @IsOptional()
  @IsBoolean()
  faithful?: boolean;

  @IsOptional()
  @IsString()
  reasoning_effort?: string;

  @IsOptional()
  @IsString()
  verbosity?: string;
}

/** The error message the class-validator version gave for `body`, or `undefined` when it accepted it. */
export function classValidatorMessage(body: Record<string, unknown>): string | undefined {
  const dto = plainToInstance(ChatCompletionRequestDto, body);
  const errors = validateSync(dto, { forbidUnknownValues: false, stopAtFirstError: true });
  return errors.length > 0 ? flattenErrors(errors).slice(0, 5).join('; ') : undefined;
}

function flattenErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.replace(new RegExp(`^${error.property}\\b`), path),
    );
    return [...own, ...flattenErrors(error.children ?? [], path)];
  });
}
