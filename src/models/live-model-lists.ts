import { Injectable } from '@nestjs/common';
import type { ProviderId } from '../core/provider-id';
import type { UpstreamModelInfo } from './upstream-model-info';

/**
 * What the upstreams say about their models while the gateway runs (docs/design/decisions.md §3):
 * each family's live model list as last fetched, and the models a family refused for its login.
 * The adapters write here; the model catalog reads it and rebuilds its view when `revision`
 * moves, so no adapter edits the catalog.
 */
@Injectable()
export class LiveModelLists {
  private readonly lists = new Map<ProviderId, readonly UpstreamModelInfo[]>();
  /**
   * Upstream models a family refused for its login (model errors), with the live entry they had
   * then: not listed until the live list's entry for them changes (a refusal is the backend's word
   * for this login; a list that still offers the same entry does not overrule it).
   */
  private readonly refusals = new Map<ProviderId, Map<string, string>>();
  /**
   * Models a family's live list offered earlier in this process and no longer does, with their
   * last entry: what a 404 for one of their ids says (model-not-found.ts). Kept until a list
   * offers the model again; at most every slug the upstream ever listed.
   */
  private readonly dropped = new Map<ProviderId, Map<string, UpstreamModelInfo>>();
  private changes = 0;

  /** Bumped on every change. */
  get revision(): number {
    return this.changes;
  }

  /** The families that published a list, with it. */
  published(): ReadonlyMap<ProviderId, readonly UpstreamModelInfo[]> {
    return this.lists;
  }

  listOf(provider: ProviderId): readonly UpstreamModelInfo[] | undefined {
    return this.lists.get(provider);
  }

  isRefused(provider: ProviderId, upstreamModel: string): boolean {
    return this.refusals.get(provider)?.has(upstreamModel) ?? false;
  }

  /** The last live entry of a model the family's list offered earlier and no longer does. */
  droppedModel(provider: ProviderId, slug: string): UpstreamModelInfo | undefined {
    return this.dropped.get(provider)?.get(slug);
  }

  /** The models the family's list no longer offers (`droppedModel`). */
  droppedModels(provider: ProviderId): Iterable<UpstreamModelInfo> {
    return this.dropped.get(provider)?.values() ?? [];
  }

  /** Replaces a family's live list; a refusal ends once the list's entry for that model changed. */
  publish(provider: ProviderId, infos: readonly UpstreamModelInfo[]): void {
    this.noteDropped(provider, this.lists.get(provider) ?? [], infos);
    this.lists.set(provider, infos);
    const refused = this.refusals.get(provider);
    for (const [slug, entry] of refused ?? []) {
      if (liveEntryOf(infos, slug) !== entry) refused!.delete(slug);
    }
    this.changes += 1;
  }

  private noteDropped(
    provider: ProviderId,
    previous: readonly UpstreamModelInfo[],
    next: readonly UpstreamModelInfo[],
  ): void {
    const offered = new Set(next.map((info) => info.slug));
    const dropped = this.dropped.get(provider) ?? new Map<string, UpstreamModelInfo>();
    for (const info of previous) if (!offered.has(info.slug)) dropped.set(info.slug, info);
    for (const slug of offered) dropped.delete(slug);
    if (dropped.size > 0) this.dropped.set(provider, dropped);
    else this.dropped.delete(provider);
  }

  /** A model the upstream refused as unknown or not served to this login: no longer listed. */
  refuse(provider: ProviderId, upstreamModel: string): void {
    const refused = this.refusals.get(provider) ?? new Map<string, string>();
    if (refused.has(upstreamModel)) return;
    refused.set(upstreamModel, liveEntryOf(this.lists.get(provider) ?? [], upstreamModel));
    this.refusals.set(provider, refused);
    this.changes += 1;
  }
}

/** A slug's entry in a live list, serialized (`''` when the list lacks it), to see whether it changed. */
function liveEntryOf(infos: readonly UpstreamModelInfo[], slug: string): string {
  const info = infos.find((candidate) => candidate.slug === slug);
  return info ? JSON.stringify(info) : '';
}
