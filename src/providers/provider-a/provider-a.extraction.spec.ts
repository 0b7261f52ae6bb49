import { ModelCatalog } from '../../models/model-catalog';
import { buildExtractionBody, EXTRACTION_INSTRUCTIONS } from './provider-a.extraction';

const catalog = ModelCatalog.load(undefined, ['provider_a']);

describe(buildExtractionBody.name, () => {
  const schema = {
    type: 'object',
    properties: { total: { type: 'number' } },
    required: ['total'],
    additionalProperties: false,
  };

  it('sends exactly the extraction keys with a strict json_schema format and the input verbatim', () => {
    const input = '  Q3 revenue: 12.5M\n```not a fence to us```  ';
    const body = buildExtractionBody(
      {
        model: catalog.resolve('gpt-5.6-terra-high')!,
        input,
        schema,
        schemaName: 'quarter_summary',
        conversationId: 'caller\nop\nsum',
      },
      'key-1',
    );
    expect(Object.keys(body).sort()).toEqual([
      'input',
      'instructions',
      'model',
      'prompt_cache_key',
      'reasoning',
      'store',
      'stream',
      'text',
    ]);
    expect(body).toEqual({
      model: 'gpt-5.6-terra',
      instructions: EXTRACTION_INSTRUCTIONS,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }],
      stream: true,
      store: false,
      reasoning: { effort: 'high' },
      text: { verbosity: 'low', format: { type: 'json_schema', name: 'quarter_summary', strict: true, schema } },
      prompt_cache_key: 'key-1',
    });
  });

  it('uses the resolved verbosity (a request override wins over the catalog value)', () => {
    const body = buildExtractionBody(
      {
        model: catalog.resolve('gpt-5.6-sol', { verbosity: 'high' })!,
        input: 'x',
        schema,
        schemaName: 's',
        conversationId: 'c',
      },
      'k',
    );
    expect(body.text).toMatchObject({ verbosity: 'high' });
  });

  it('asks for low verbosity when neither the catalog row nor the request sets one', () => {
    const model = { ...catalog.resolve('gpt-5.6-sol')!, verbosity: null };
    const body = buildExtractionBody({ model, input: 'x', schema, schemaName: 's', conversationId: 'c' }, 'k');
    expect(body.text).toMatchObject({ verbosity: 'low' });
  });

  it('adds service_tier for -fast ids only', () => {
    const body = buildExtractionBody(
      { model: catalog.resolve('gpt-5.6-sol-fast')!, input: 'x', schema, schemaName: 's', conversationId: 'c' },
      'k',
    );
    expect(body.service_tier).toBe('priority');
    expect(EXTRACTION_INSTRUCTIONS).toMatch(/JSON object/);
    expect(EXTRACTION_INSTRUCTIONS).toMatch(/no code fences/);
  });
});
