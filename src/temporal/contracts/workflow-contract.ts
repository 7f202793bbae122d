/**
 * A workflow as its callers know it: the type name it is registered under, its one input and its result. Gateways
 * and schedules start workflows through these objects, never a bare string, and `test/unit/workflow-contracts.test.ts`
 * has the type checker hold every contract to the workflow function `workflows/index.ts` exports under its name.
 */
export interface WorkflowContract<Name extends string, Input, Result> {
  readonly name: Name;
  /** Never set: carries the input and result types to the client's typed start. */
  readonly signature?: (input: Input) => Promise<Result>;
}

export function workflowContract<Input, Result>() {
  return <Name extends string>(name: Name): WorkflowContract<Name, Input, Result> => ({ name });
}

/** The workflow function a contract stands for: what `client.workflow.start<…>` is typed with. */
export type WorkflowFunction<C> =
  C extends WorkflowContract<string, infer Input, infer Result> ? (input: Input) => Promise<Result> : never;
