import * as index from 'class-validator';
import * as parts from './class-validator';

describe('class-validator, loaded file by file', () => {
  it('gives the very functions the package index exports', () => {
    for (const name of [
      'ValidateBy',
      'IsOptional',
      'IsIn',
      'IsNotEmpty',
      'IsString',
      'IsBoolean',
      'IsObject',
      'IsInt',
      'Min',
    ] as const)
      expect([name, parts[name]]).toEqual([name, index[name]]);
  });

  it('validates like the index does', () => {
    class Probe {
      @parts.IsOptional()
      @parts.IsString()
      name?: unknown;
    }
    const probe = Object.assign(new Probe(), { name: 5 });
    const options = { forbidUnknownValues: false };
    const constraints = (errors: index.ValidationError[]) => errors.map((error) => error.constraints);
    expect(constraints(parts.validateSync(probe, options))).toEqual(constraints(index.validateSync(probe, options)));
    expect(constraints(parts.validateSync(probe, options))).toEqual([{ isString: 'name must be a string' }]);
  });
});

describe('classValidator', () => {
  const options = {
    stopAtFirstError: true,
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  };
  const IsEven = (): PropertyDecorator =>
    parts.ValidateBy({
      name: 'isEven',
      validator: { validate: (value) => value === undefined || (typeof value === 'number' && value % 2 === 0) },
    });

  class Probe {
    @parts.IsOptional() @parts.IsString() @parts.IsNotEmpty() name?: unknown;
    @parts.IsOptional() @parts.IsIn(['a', 'b']) kind?: unknown;
    @parts.IsOptional() @parts.IsInt() @parts.Min(0) count?: unknown;
    @IsEven() even?: unknown;
    @parts.IsBoolean() flag?: unknown;
    @parts.IsOptional() @parts.IsObject() extra?: unknown;
  }

  const values = [undefined, null, '', 'a', 'b', 'x', 0, -1, 2, 3, 1.5, true, false, {}, [], [1]];
  const fields = ['name', 'kind', 'count', 'even', 'flag', 'extra'] as const;

  it('gives validateSync’s errors for every instance, valid or not', () => {
    const validate = parts.classValidator(Probe, options);
    // Every value in every field, the others valid, then values mixed across fields.
    const valid = { flag: true };
    const probes: Array<Record<string, unknown>> = [valid];
    for (const field of fields) for (const value of values) probes.push({ ...valid, [field]: value });
    for (let i = 0; i < values.length; i++)
      probes.push(Object.fromEntries(fields.map((field, j) => [field, values[(i + j * 3) % values.length]])));
    let passed = 0;
    for (const fieldValues of probes) {
      const probe = Object.assign(new Probe(), fieldValues);
      const errors = validate(probe);
      expect(errors).toEqual(parts.validateSync(probe, options));
      if (errors.length === 0) passed++;
    }
    expect(passed).toBeGreaterThan(20);
  });

  it('hands a class whose rules it does not check itself to validateSync', () => {
    class Listed {
      @parts.IsString({ each: true }) names?: unknown;
    }
    const validate = parts.classValidator(Listed, options);
    for (const names of [['a'], ['a', 1], 'a', 1]) {
      const probe = Object.assign(new Listed(), { names });
      expect(validate(probe)).toEqual(parts.validateSync(probe, options));
    }
  });
});
