/**
 * The transparency log does not back what was served: a bad checkpoint signature, a proof that does not
 * lead to the signed root, a rewound, forked or rewritten log, or a served profile that is not the logged one.
 */
export class LogVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogVerificationError';
  }
}
