import { parser } from '@prometheus-io/lezer-promql';
import type { SyntaxNode } from '@lezer/common';

/**
 * What a PromQL expression reads, found with the Prometheus project's own grammar
 * (`@prometheus-io/lezer-promql`, the parser of the Prometheus UI) rather than regexes, so
 * selectors inside functions, binary operators and subqueries are all seen and a syntax error
 * is reported instead of silently skipped.
 */
export interface LabelMatcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

export interface Selector {
  readonly metric: string;
  readonly matchers: readonly LabelMatcher[];
}

export interface Aggregation {
  /** Labels of `by (...)`; empty for `without` or no modifier. */
  readonly by: readonly string[];
  /** The selectors inside the aggregated expression. */
  readonly selectors: readonly Selector[];
}

export interface ParsedQuery {
  readonly selectors: readonly Selector[];
  readonly aggregations: readonly Aggregation[];
}

/** Grafana's built-in variables and this repo's dashboard variables, replaced before parsing. */
const GRAFANA_VARIABLES: ReadonlyArray<[RegExp, string]> = [
  [/\$__rate_interval|\$__interval|\$__range/g, '5m'],
  [/\$\{?job\}?/g, '.*'],
];

export function substituteGrafanaVariables(expr: string): string {
  return GRAFANA_VARIABLES.reduce((text, [pattern, value]) => text.replace(pattern, value), expr);
}

function unquote(literal: string): string {
  // PromQL strings are Go strings; the queries here only use plain double-quoted literals.
  return JSON.parse(literal.startsWith("'") ? `"${literal.slice(1, -1)}"` : literal) as string;
}

function childrenOf(node: SyntaxNode, name: string): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) if (child.name === name) found.push(child);
  return found;
}

function selectorAt(node: SyntaxNode, text: string): Selector {
  const slice = (n: SyntaxNode) => text.slice(n.from, n.to);
  const identifier = childrenOf(node, 'Identifier')[0];
  const matchers: LabelMatcher[] = [];
  for (const list of childrenOf(node, 'LabelMatchers')) {
    for (const matcher of [...childrenOf(list, 'UnquotedLabelMatcher'), ...childrenOf(list, 'QuotedLabelMatcher')]) {
      const label = childrenOf(matcher, 'LabelName')[0] ?? childrenOf(matcher, 'QuotedLabelName')[0];
      const op = childrenOf(matcher, 'MatchOp')[0];
      const value = childrenOf(matcher, 'StringLiteral')[0];
      matchers.push({
        label: slice(label).replace(/^"|"$/g, ''),
        op: slice(op) as LabelMatcher['op'],
        value: unquote(slice(value)),
      });
    }
  }
  const nameMatcher = matchers.find((matcher) => matcher.label === '__name__' && matcher.op === '=');
  const metric = identifier ? slice(identifier) : nameMatcher?.value;
  if (!metric) throw new Error(`selector without a metric name: ${slice(node)}`);
  return { metric, matchers: matchers.filter((matcher) => matcher !== nameMatcher) };
}

/** Parses `expr` (Grafana variables substituted); throws with the position of any syntax error. */
export function parsePromQL(expr: string): ParsedQuery {
  const text = substituteGrafanaVariables(expr);
  const tree = parser.parse(text);
  const located: Array<Selector & { readonly from: number; readonly to: number }> = [];
  const aggregateNodes: SyntaxNode[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) errors.push(ref.from);
      if (ref.name === 'VectorSelector') located.push({ ...selectorAt(ref.node, text), from: ref.from, to: ref.to });
      if (ref.name === 'AggregateExpr') aggregateNodes.push(ref.node);
    },
  });
  if (errors.length > 0) throw new Error(`PromQL syntax error at offset ${errors[0]}: ${text}`);
  const aggregations = aggregateNodes.map((node) => {
    const modifier = childrenOf(node, 'AggregateModifier')[0];
    const grouping =
      modifier && childrenOf(modifier, 'By').length > 0 ? childrenOf(modifier, 'GroupingLabels')[0] : undefined;
    const by = grouping ? childrenOf(grouping, 'LabelName').map((label) => text.slice(label.from, label.to)) : [];
    return { by, selectors: located.filter((selector) => selector.from >= node.from && selector.to <= node.to) };
  });
  return { selectors: located, aggregations };
}
