// What the store's functions need of a database: prepared statements with bound parameters, and a batch that
// runs as one transaction. D1 (the control plane) has this shape, and so has an account's object
// (src/store/account/object-sql.ts), so both planes write plain SQL the same way.

export type Row = Record<string, unknown>;

export interface SqlResult<T = Row> {
  results: T[];
  meta: { changes: number; last_row_id: number; rows_read?: number; rows_written?: number };
}

export interface SqlStatement {
  bind(...values: unknown[]): SqlStatement;
  first<T = Row>(column?: string): Promise<T | null>;
  all<T = Row>(): Promise<SqlResult<T>>;
  run<T = Row>(): Promise<SqlResult<T>>;
}

export interface Sql {
  prepare(query: string): SqlStatement;
  /** All or none: one transaction. */
  batch<T = Row>(statements: SqlStatement[]): Promise<SqlResult<T>[]>;
}
