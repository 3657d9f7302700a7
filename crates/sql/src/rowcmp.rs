//! Row constructors: `(a, b) = (1, 2)`, `(a, b) > (x, y)` (keyset pagination) and
//! `(a, b) [NOT] IN ((1, 2), (3, 4))` (composite keys, as ORMs send them) are rewritten into
//! comparisons of their elements before compiling, with the same truth values (NULL where
//! MySQL's row comparison gives NULL). Where it is implied, a plain conjunct on each
//! element is added so the access planner finds a key range (`a >= x AND (...)`,
//! `a IN (1, 3) AND b IN (2, 4) AND (...)`). This module only rewrites syntax; it never
//! evaluates anything. Elements may be evaluated more than once.

use crate::result::SqlError;
use sqlparser::ast;
use sqlparser::ast::BinaryOperator as B;
use sqlparser::ast::Expr as A;

/// ER_OPERAND_COLUMNS: a row where a value of `n` columns is needed.
pub fn operand_columns(n: usize) -> SqlError {
    SqlError::new(
        1241,
        "21000",
        format!("Operand should contain {n} column(s)"),
    )
}

/// ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION: a row where a single value is needed, or
/// the other way round (`(1, 2) = 1`); the operands are named by type (`row`, `int`, ...).
pub fn illegal_types(left: &str, right: &str, op: &str) -> SqlError {
    SqlError::new(
        4078,
        "HY000",
        format!("Illegal parameter data types {left} and {right} for operation '{op}'"),
    )
}

/// How MariaDB's messages name an operator.
fn op_name(op: &B) -> String {
    match op {
        B::Spaceship => "<=>".into(),
        B::NotEq => "<>".into(),
        other => other.to_string().to_ascii_lowercase(),
    }
}

/// The elements of a row constructor `(a, b, ...)`, or None for a single value.
pub fn row_items(e: &ast::Expr) -> Option<&[ast::Expr]> {
    match e {
        A::Tuple(items) => Some(items),
        A::Nested(inner) => row_items(inner),
        _ => None,
    }
}

fn bin(left: ast::Expr, op: B, right: ast::Expr) -> ast::Expr {
    A::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }
}

fn nested(e: ast::Expr) -> ast::Expr {
    A::Nested(Box::new(e))
}

/// `parts` joined by `op` (AND / OR), each in parentheses.
fn join(parts: Vec<ast::Expr>, op: B) -> ast::Expr {
    let mut it = parts.into_iter().map(nested);
    let first = it.next().unwrap_or(A::Value(ast::Value::Null.into()));
    it.fold(first, |acc, p| bin(acc, op.clone(), p))
}

/// `left op right` with a row on either side, rewritten; None when neither side is a row.
/// Rows of different widths are 1241; a row against a single value, or under an operator
/// that is no comparison, is 4078, naming the single value's type by `type_name`.
pub fn comparison(
    left: &ast::Expr,
    op: &B,
    right: &ast::Expr,
    type_name: &mut dyn FnMut(&ast::Expr) -> Result<String, SqlError>,
) -> Result<Option<ast::Expr>, SqlError> {
    let (l, r) = match (row_items(left), row_items(right)) {
        (None, None) => return Ok(None),
        (Some(l), Some(r)) => (l, r),
        (Some(_), None) => {
            return Err(illegal_types("row", &type_name(right)?, &op_name(op)));
        }
        (None, Some(_)) => {
            return Err(illegal_types(&type_name(left)?, "row", &op_name(op)));
        }
    };
    let comparing = matches!(
        op,
        B::Eq | B::Spaceship | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq
    );
    if !comparing {
        return Err(illegal_types("row", "row", &op_name(op)));
    }
    if l.len() != r.len() {
        return Err(operand_columns(l.len()));
    }
    if l.is_empty() {
        return Err(operand_columns(1));
    }
    let pairs = |op: B| -> Vec<ast::Expr> {
        l.iter()
            .zip(r)
            .map(|(a, b)| bin(a.clone(), op.clone(), b.clone()))
            .collect()
    };
    Ok(Some(match op {
        B::Eq | B::Spaceship => join(pairs(op.clone()), B::And),
        B::NotEq => join(pairs(B::NotEq), B::Or),
        B::Lt | B::LtEq | B::Gt | B::GtEq => {
            let (strict, loose) = match op {
                B::Lt | B::LtEq => (B::Lt, B::LtEq),
                _ => (B::Gt, B::GtEq),
            };
            // Lexicographic: the first pair that differs decides, the last pair is compared
            // with `op` itself.
            let last = l.len() - 1;
            let mut lex = bin(l[last].clone(), op.clone(), r[last].clone());
            for i in (0..last).rev() {
                lex = bin(
                    nested(bin(l[i].clone(), strict.clone(), r[i].clone())),
                    B::Or,
                    nested(bin(
                        nested(bin(l[i].clone(), B::Eq, r[i].clone())),
                        B::And,
                        nested(lex),
                    )),
                );
            }
            if last == 0 {
                lex
            } else {
                // Implied by the comparison; gives the planner a range on the first element.
                join(vec![bin(l[0].clone(), loose, r[0].clone()), lex], B::And)
            }
        }
        _ => return Err(illegal_types("row", "row", &op_name(op))),
    }))
}

/// `expr [NOT] IN (list)` with a row as `expr`, rewritten; None when neither `expr` nor an
/// item is a row. Errors as `comparison`'s.
pub fn in_list(
    expr: &ast::Expr,
    list: &[ast::Expr],
    negated: bool,
    type_name: &mut dyn FnMut(&ast::Expr) -> Result<String, SqlError>,
) -> Result<Option<ast::Expr>, SqlError> {
    let Some(l) = row_items(expr) else {
        return match list.iter().find(|i| row_items(i).is_some()) {
            Some(_) => Err(illegal_types(&type_name(expr)?, "row", "=")),
            None => Ok(None),
        };
    };
    if l.is_empty() {
        return Err(operand_columns(1));
    }
    let mut rows = Vec::with_capacity(list.len());
    for item in list {
        match row_items(item) {
            Some(r) if r.len() == l.len() => rows.push(r),
            Some(_) => return Err(operand_columns(l.len())),
            None => return Err(illegal_types("row", &type_name(item)?, "in")),
        }
    }
    let matches: Vec<ast::Expr> = rows
        .iter()
        .map(|r| {
            let eqs = l
                .iter()
                .zip(r.iter())
                .map(|(a, b)| bin(a.clone(), B::Eq, b.clone()))
                .collect();
            join(eqs, B::And)
        })
        .collect();
    let single = rows.len() == 1;
    let any = if single {
        matches
            .into_iter()
            .next()
            .unwrap_or(A::Value(ast::Value::Null.into()))
    } else {
        join(matches, B::Or)
    };
    if negated {
        return Ok(Some(A::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr: Box::new(nested(any)),
        }));
    }
    if single {
        return Ok(Some(any));
    }
    // Implied by the match: each element is among its column of the list.
    let mut parts: Vec<ast::Expr> = l
        .iter()
        .enumerate()
        .map(|(i, a)| A::In {
            expr: Box::new(a.clone()),
            target: ast::InTarget::List(rows.iter().map(|r| r[i].clone()).collect()),
            negated: false,
            global: false,
        })
        .collect();
    parts.push(any);
    Ok(Some(join(parts, B::And)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn expr(sql: &str) -> ast::Expr {
        Parser::new(&MySqlDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .expect("expression parses")
    }

    fn int(_: &ast::Expr) -> Result<String, SqlError> {
        Ok("int".into())
    }

    fn rewritten(sql: &str) -> String {
        match expr(sql) {
            A::BinaryOp { left, op, right } => comparison(&left, &op, &right, &mut int)
                .expect("rewrites")
                .expect("a row")
                .to_string(),
            A::In {
                expr: x,
                target: ast::InTarget::List(list),
                negated,
                ..
            } => in_list(&x, &list, negated, &mut int)
                .expect("rewrites")
                .expect("a row")
                .to_string(),
            other => panic!("not a row comparison: {other}"),
        }
    }

    #[test]
    fn row_equality_and_keyset_comparisons_become_element_comparisons() {
        assert_eq!(rewritten("(a, b) = (1, 2)"), "(a = 1) AND (b = 2)");
        assert_eq!(rewritten("(a, b) <> (1, 2)"), "(a <> 1) OR (b <> 2)");
        assert_eq!(
            rewritten("(a, b) > (1, 2)"),
            "(a >= 1) AND ((a > 1) OR ((a = 1) AND (b > 2)))"
        );
        assert_eq!(
            rewritten("(a, b, c) <= (1, 2, 3)"),
            "(a <= 1) AND ((a < 1) OR ((a = 1) AND ((b < 2) OR ((b = 2) AND (c <= 3)))))"
        );
    }

    #[test]
    fn row_in_lists_keep_a_per_column_in_for_the_planner() {
        assert_eq!(
            rewritten("(a, b) IN ((1, 'x'), (2, 'y'))"),
            "(a IN (1, 2)) AND (b IN ('x', 'y')) AND (((a = 1) AND (b = 'x')) OR ((a = 2) AND (b = 'y')))"
        );
        assert_eq!(rewritten("(a, b) IN ((1, 2))"), "(a = 1) AND (b = 2)");
        assert_eq!(
            rewritten("(a, b) NOT IN ((1, 2), (3, 4))"),
            "NOT (((a = 1) AND (b = 2)) OR ((a = 3) AND (b = 4)))"
        );
    }

    #[test]
    fn rows_of_different_widths_are_1241_and_a_row_against_a_value_is_4078() {
        let err = |sql: &str| {
            match expr(sql) {
                A::BinaryOp { left, op, right } => comparison(&left, &op, &right, &mut int),
                A::In {
                    expr: x,
                    target: ast::InTarget::List(list),
                    negated,
                    ..
                } => in_list(&x, &list, negated, &mut int),
                other => panic!("not a row comparison: {other}"),
            }
            .unwrap_err()
        };
        let e = err("(a, b) = (1, 2, 3)");
        assert_eq!(
            (e.code, e.message.as_str()),
            (1241, "Operand should contain 2 column(s)")
        );
        assert_eq!(err("(a, b) IN ((1, 2), (1, 2, 3))").code, 1241);
        let e = err("a = (1, 2)");
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                4078,
                "Illegal parameter data types int and row for operation '='"
            )
        );
        let e = err("(1, 2) + 1");
        assert_eq!(
            e.message,
            "Illegal parameter data types row and int for operation '+'"
        );
        let e = err("(a, b) IN ((1, 2), 3)");
        assert_eq!(
            e.message,
            "Illegal parameter data types row and int for operation 'in'"
        );
    }
}
