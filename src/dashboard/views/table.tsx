import type { Child } from 'hono/jsx';

/**
 * A table of rows under named columns; on a narrow screen each row becomes a card with every cell under its
 * column's name (the stylesheet's `table.cards`).
 */
export function Table(props: { columns: string[]; rows: Child[][]; empty?: string }) {
  return (
    <div class="table-wrap">
      <table class="cards">
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col">{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 && props.empty ? (
            <tr>
              <td colspan={props.columns.length}>{props.empty}</td>
            </tr>
          ) : (
            props.rows.map((cells) => (
              <tr>
                {cells.map((cell, index) => (
                  <td data-label={props.columns[index]}>{cell}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** Newest and Older links over a newest-first list, keeping its filters (`query`) on both. */
export function Pager(props: { path: string; query: URLSearchParams; first: boolean; next: string | null }) {
  const withCursor = (cursor: string) => new URLSearchParams([...props.query, ['after', cursor]]);
  return (
    <nav class="pager" aria-label="Pages">
      {props.first ? null : <a href={`${props.path}?${props.query}`}>Newest</a>}
      {props.next ? <a href={`${props.path}?${withCursor(props.next)}`}>Older</a> : null}
    </nav>
  );
}
