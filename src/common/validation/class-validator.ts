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

export type { ValidationOptions, ValidatorOptions } from 'class-validator';
