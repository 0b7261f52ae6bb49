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

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** `content`: a string, an array of parts, or null (contract "Message fields"). */
function IsMessageContent(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isMessageContent',
      validator: {
        validate: (value: unknown) =>
          value === undefined ||
          value === null ||
          typeof value === 'string' ||
          (Array.isArray(value) && value.every((part) => typeof part === 'object' && part !== null)),
        defaultMessage: () => '$property must be a string, an array of content parts, or null',
      },
    },
    options,
  );
}

/** `tool_choice`: `auto`, `none`, `required`, or an object naming a tool. */
function IsToolChoice(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isToolChoice',
      validator: {
        validate: (value: unknown) =>
          value === undefined || typeof value === 'string' || (typeof value === 'object' && value !== null && !Array.isArray(value)),
        defaultMessage: () => '$property must be "auto", "none", "required" or an object naming a tool',
      },
    },
    options,
  );
}

function IsArrayOfObjects(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isArrayOfObjects',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) && value.every((entry) => typeof entry === 'object' && entry !== null && !Array.isArray(entry)),
        defaultMessage: () => '$property must be an array of objects',
      },
    },
    options,
  );
}

export class ChatMessageDto {
  @IsIn(CHAT_ROLES as unknown as string[], { message: '$property must be one of system, developer, user, assistant, tool' })
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
 * `max_output_tokens`, vendor extensions) is ignored, never rejected (contract "Versioning" 4).
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
