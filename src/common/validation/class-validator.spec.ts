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
