import type { ValidationError, ValidatorOptions } from 'class-validator';

/*
 * The parts of class-validator the gateway validates bodies with, each loaded from its own file.
 * The package's index loads every rule it has, validator.js and IsPhoneNumber's libphonenumber-js
 * metadata among them: about 3 MiB of resident memory, kept for the process's life, for rules no
 * body here uses. class-validator.spec.ts checks that each is the index's own export, so a release
 * that moves a file fails a test rather than a start.
 */

type ClassValidator = typeof import('class-validator');

/** `name` from class-validator's CommonJS build, file `file` (what its index re-exports). */
function load<K extends keyof ClassValidator>(file: string, name: K): ClassValidator[K] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- one file of the package, not its index (see above)
  return (require(`class-validator/cjs/${file}`) as ClassValidator)[name];
}

export const ValidateBy = load('decorator/common/ValidateBy', 'ValidateBy');
export const IsOptional = load('decorator/common/IsOptional', 'IsOptional');
export const IsIn = load('decorator/common/IsIn', 'IsIn');
export const IsNotEmpty = load('decorator/common/IsNotEmpty', 'IsNotEmpty');
export const IsString = load('decorator/typechecker/IsString', 'IsString');
export const IsBoolean = load('decorator/typechecker/IsBoolean', 'IsBoolean');
export const IsObject = load('decorator/typechecker/IsObject', 'IsObject');
export const IsInt = load('decorator/typechecker/IsInt', 'IsInt');
export const Min = load('decorator/number/Min', 'Min');

const validator = new (load('validation/Validator', 'Validator'))();

/** class-validator's `validateSync` for a decorated instance. */
export function validateSync(object: object, options: ValidatorOptions): ValidationError[] {
  return validator.validateSync(object, options);
}

/**
 * `validateSync(object, options)` for the instances of one decorated class, for the hot path of a
 * route. class-validator works out a class's rules anew on every call (it filters and groups the
 * whole metadata list, makes an error object per property and a closure per rule): about 20 µs
 * for the chat body, where its rules themselves take under 2 µs. Here the rules are read from its
 * metadata once, on first use, and a valid instance (nearly every request) is decided by calling
 * them directly: each property's conditions (`@IsOptional`, `@ValidateIf`), then its rules' own
 * `validate`. An instance that breaks one is validated again by `validateSync`, so the errors and
 * their messages are class-validator's own.
 *
 * The direct check covers what the gateway's DTOs use: conditional rules and synchronous custom
 * ones (every `ValidateBy` decorator, the built-ins included), under options that change no
 * verdict. A class with anything else (nested or `each` rules, `@IsDefined`, groups, whitelisting,
 * skipped properties) is always handed to `validateSync`.
 */
export function classValidator<T extends object>(
  type: abstract new () => T,
  options: ValidatorOptions,
): (object: T) => ValidationError[] {
  let passes: ((object: T) => boolean) | null | undefined;
  return (object) => {
    if (passes === undefined) passes = directCheck(type, options);
    return passes !== null && passes(object) ? [] : validator.validateSync(object, options);
  };
}

/** The parts of class-validator's metadata the direct check reads (its own types are internal). */
interface RuleMetadata {
  readonly type: string;
  readonly propertyName: string;
  readonly constraints: unknown[];
  readonly constraintCls: object;
  readonly each?: boolean;
  readonly validateIf?: (object: object, value: unknown) => boolean;
}
interface ConstraintMetadata {
  readonly async: boolean;
  readonly instance: { validate(value: unknown, args: object): unknown };
}
interface MetadataStorage {
  getTargetValidationMetadatas(
    target: object,
    schema: string | undefined,
    always: boolean,
    strictGroups: boolean,
    groups?: string[],
  ): RuleMetadata[];
  getTargetValidatorConstraints(target: object): ConstraintMetadata[];
}

/** class-validator's one store of every decorated class's rules (the validator reads the same). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- one file of the package, not its index (see above)
const storageFile = require('class-validator/cjs/metadata/MetadataStorage') as {
  getMetadataStorage(): MetadataStorage;
};
const metadataStorage = storageFile.getMetadataStorage();

const CONDITIONAL = 'conditionalValidation';
const CUSTOM = 'customValidation';

/** One property's rules: it is checked when every condition holds, and then passes every check. */
interface PropertyRules {
  readonly property: string;
  readonly conditions: Array<(object: object, value: unknown) => boolean>;
  readonly checks: Array<{ readonly metadata: RuleMetadata; readonly constraint: ConstraintMetadata }>;
}

/** The direct check of `type`'s rules, or `null` when they or the options need class-validator's executor. */
function directCheck<T extends object>(
  type: abstract new () => T,
  options: ValidatorOptions,
): ((object: T) => boolean) | null {
  if (
    options.groups !== undefined ||
    options.always === true ||
    options.strictGroups === true ||
    options.whitelist === true ||
    options.skipMissingProperties === true ||
    options.skipNullProperties === true ||
    options.skipUndefinedProperties === true
  )
    return null;
  const metadatas = metadataStorage.getTargetValidationMetadatas(type, undefined, false, false, undefined);
  // class-validator reports an unknown value for a class without rules unless told not to.
  if (metadatas.length === 0 && options.forbidUnknownValues !== false) return null;
  const byProperty = new Map<string, PropertyRules>();
  for (const metadata of metadatas) {
    if (metadata.each === true || (metadata.type !== CONDITIONAL && metadata.type !== CUSTOM)) return null;
    let rules = byProperty.get(metadata.propertyName);
    if (rules === undefined) {
      rules = { property: metadata.propertyName, conditions: [], checks: [] };
      byProperty.set(metadata.propertyName, rules);
    }
    if (metadata.type === CONDITIONAL) {
      rules.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    // validateSync skips asynchronous constraints, so they never fail an instance here either.
    for (const constraint of metadataStorage.getTargetValidatorConstraints(metadata.constraintCls))
      if (!constraint.async) rules.checks.push({ metadata, constraint });
  }
  const properties = [...byProperty.values()];
  return (object) => {
    const record = object as Record<string, unknown>;
    for (const { property, conditions, checks } of properties) {
      const value = record[property];
      if (!holdsAll(conditions, object, value)) continue;
      for (const { metadata, constraint } of checks) {
        if (metadata.validateIf !== undefined && !metadata.validateIf(object, value)) continue;
        const args = {
          targetName: object.constructor.name,
          property,
          object,
          value,
          constraints: metadata.constraints,
        };
        // A promise (always truthy) is settled after validateSync has returned: it passes there too.
        if (!constraint.instance.validate(value, args)) return false;
      }
    }
    return true;
  };
}

function holdsAll(conditions: PropertyRules['conditions'], object: object, value: unknown): boolean {
  for (const condition of conditions) if (!condition(object, value)) return false;
  return true;
}

export type { ValidationError, ValidationOptions, ValidatorOptions } from 'class-validator';
