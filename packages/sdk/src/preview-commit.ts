import { buildContract, toolAddress } from '@gatehouse/contracts';
import type { JSONSchema, SchemaType, ToolContract, ToolSpec } from '@gatehouse/contracts';

/** The id of a stored proposal, as Gatehouse makes it (`p_` and 24 hex digits). */
export const proposalIdSchema = {
  type: 'string',
  pattern: '^p_[A-Za-z0-9]{8,64}$',
  description: 'Id of a stored proposal.',
} as const;

/** The input of every commit tool: the proposal id and nothing else. No replacement arguments. */
export const commitInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['proposal_id'],
  properties: { proposal_id: proposalIdSchema },
} as const;
export type CommitInputSchema = typeof commitInputSchema;

/** Fields the pair sets itself: effects, the references between the two tools, the proposal schema. */
type PairOwned = 'effect' | 'commits' | 'previewedBy' | 'proposal';

/** The preview: a read that computes an effect without changing anything. */
export type PreviewSpec<I extends JSONSchema, O extends JSONSchema> = Omit<ToolSpec<I, O>, PairOwned>;

/** The commit: a write that takes only a proposal id (its input is `commitInputSchema`) and needs an approval rule. */
export type CommitSpec<O extends JSONSchema> = Omit<ToolSpec<CommitInputSchema, O>, PairOwned | 'input' | 'approval'> & {
  readonly approval: string;
};

export interface PreviewCommitSpec<PI extends JSONSchema, PO extends JSONSchema, CO extends JSONSchema, P extends JSONSchema> {
  /**
   * JSON Schema of the proposal arguments, written `as const`: what the preview's `propose` drafts,
   * what is stored, hashed and approved, and what the commit's `run` receives. The catalog lints and
   * compiles it at load; the executor checks drafts and stored proposals against it.
   */
  readonly proposal: P;
  readonly preview: PreviewSpec<PI, PO>;
  readonly commit: CommitSpec<CO>;
}

/** The preview side of a typed pair: `propose` drafts `Proposal`. */
export type PreviewContract<I extends JSONSchema, O extends JSONSchema, Proposal> = ToolContract<
  I,
  O,
  SchemaType<I>,
  SchemaType<O>,
  Proposal,
  'preview'
>;

/** The commit side of a typed pair: `run` and `resourceOf` get `Proposal`. */
export type CommitContract<O extends JSONSchema, Proposal> = ToolContract<
  CommitInputSchema,
  O,
  SchemaType<CommitInputSchema>,
  SchemaType<O>,
  Proposal,
  'commit'
>;

export interface PreviewCommit<PI extends JSONSchema, PO extends JSONSchema, CO extends JSONSchema, Proposal> {
  readonly preview: PreviewContract<PI, PO, Proposal>;
  readonly commit: CommitContract<CO, Proposal>;
}

/**
 * Declares a preview/commit pair around one proposal schema. The preview becomes a read that
 * `commits` the commit, the commit a write `previewedBy` the preview that takes only a
 * `proposal_id` and carries the proposal schema. Implement each side with `implement`: the
 * preview's `propose(args, result, context)` gets the result its `run` returned and must return
 * proposal arguments of the schema's type; the commit's `run` and `resourceOf` get exactly those.
 */
export function definePreviewCommit<
  const PI extends JSONSchema,
  const PO extends JSONSchema,
  const CO extends JSONSchema,
  const P extends JSONSchema,
>(spec: PreviewCommitSpec<PI, PO, CO, P>): PreviewCommit<PI, PO, CO, NoInfer<SchemaType<P>>> {
  const previewAddress = toolAddress(spec.preview.name, spec.preview.version);
  const commitAddress = toolAddress(spec.commit.name, spec.commit.version);
  return {
    preview: buildContract<PI, PO>({ ...spec.preview, effect: 'read', commits: commitAddress }),
    commit: buildContract<CommitInputSchema, CO>({
      ...spec.commit,
      input: commitInputSchema,
      effect: 'write',
      previewedBy: previewAddress,
      proposal: spec.proposal,
    }),
  };
}
