// The account's SQLite (a Durable Object's storage) behind the statement interface the store's functions use.
// Every call runs synchronously inside the object and resolves at once, so a function that awaits only these
// promises runs to its end before the object takes another request; a batch is one transaction.
import type { Row, Sql, SqlResult, SqlStatement } from '../sql';

type Value = string | number | null | ArrayBuffer;

function boundValue(value: unknown): Value {
  if (value === undefined) throw new TypeError('undefined bound to a statement');
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  return value as Value;
}

class ObjectStatement implements SqlStatement {
  constructor(
    private readonly sql: SqlStorage,
    private readonly query: string,
    private readonly values: Value[] = [],
  ) {}

  bind(...values: unknown[]): SqlStatement {
    return new ObjectStatement(this.sql, this.query, values.map(boundValue));
  }

  /** Runs the statement now (synchronously). */
  execute<T>(): SqlResult<T> {
    const cursor = this.sql.exec(this.query, ...this.values);
    const results = cursor.toArray() as T[];
    const rows = { rows_read: cursor.rowsRead, rows_written: cursor.rowsWritten };
    // changes() keeps the last write's count through later reads: asked only when this statement wrote.
    if (cursor.rowsWritten === 0) return { results, meta: { changes: 0, last_row_id: 0, ...rows } };
    const meta = this.sql
      .exec<{ changes: number; last_row_id: number }>('SELECT changes() AS changes, last_insert_rowid() AS last_row_id')
      .one();
    return { results, meta: { ...meta, ...rows } };
  }

  async first<T = Row>(column?: string): Promise<T | null> {
    const row = this.execute<Row>().results[0];
    if (row === undefined) return null;
    return (column === undefined ? row : (row[column] ?? null)) as T | null;
  }

  async all<T = Row>(): Promise<SqlResult<T>> {
    return this.execute<T>();
  }

  async run<T = Row>(): Promise<SqlResult<T>> {
    return this.execute<T>();
  }
}

/** An account's database: only the account's object has one, so D1 can never stand in for it. */
export interface AccountSql extends Sql {
  readonly plane: 'account';
}

export class ObjectSql implements AccountSql {
  readonly plane = 'account';

  constructor(private readonly storage: DurableObjectStorage) {}

  prepare(query: string): SqlStatement {
    return new ObjectStatement(this.storage.sql, query);
  }

  async batch<T = Row>(statements: SqlStatement[]): Promise<SqlResult<T>[]> {
    return this.storage.transactionSync(() => statements.map((s) => (s as ObjectStatement).execute<T>()));
  }
}
