//! LayerDrop (arXiv 1909.11556): in training, each layer of a loop is skipped when a random draw
//! falls below the module's rate, `if dropout_probability < self.layerdrop: continue`. Dynamo
//! cannot trace the skip on a tensor draw (TCF104) nor make a numpy draw (TCF107); both rules
//! recognise the comparison here, so that they agree on which way it drops a layer.

use ruff_python_ast::{CmpOp, Expr};

use crate::model::file::imports::last_segment;
/// `self.layerdrop`, `layerdrop`, `self.encoder_layerdrop`, `self.layer_drop`: a LayerDrop rate.
pub fn names_layerdrop(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(_) | Expr::Attribute(_))
        && last_segment(expr).is_some_and(|name| name.to_ascii_lowercase().replace('_', "").contains("layerdrop"))
}

/// Any comparison with a LayerDrop rate among its operands.
pub fn compares_with_layerdrop(expr: &Expr) -> bool {
    let Expr::Compare(compare) = expr else { return false };
    std::iter::once(compare.left.as_ref()).chain(&compare.comparators).any(names_layerdrop)
}

/// One ordering of a draw against a LayerDrop rate: `draw < rate` or `rate > draw` (the layer is
/// dropped when it holds), `draw > rate` (the layer is kept when it holds).
pub struct LayerDropTest<'a> {
    pub draw: &'a Expr,
    /// Whether the comparison holding means the layer is dropped. LayerDrop drops a layer with
    /// probability `rate`, so a draw below the rate drops it and a draw above keeps it.
    pub drops_when_true: bool,
}

impl<'a> LayerDropTest<'a> {
    /// The test when `expr` is one ordering (`<`, `<=`, `>`, `>=`) of a draw against a rate, with
    /// the rate on exactly one side.
    pub fn of(expr: &'a Expr) -> Option<Self> {
        let Expr::Compare(compare) = expr else { return None };
        let ([op], [right]) = (compare.ops.as_ref(), compare.comparators.as_ref()) else { return None };
        let left = compare.left.as_ref();
        let draw_below_rate = match op {
            CmpOp::Lt | CmpOp::LtE => true,
            CmpOp::Gt | CmpOp::GtE => false,
            _ => return None,
        };
        let rate_on_right = match (names_layerdrop(left), names_layerdrop(right)) {
            (false, true) => true,
            (true, false) => false,
            // `layerdrop_prob > self.layerdrop`: the rate is the one named for LayerDrop alone.
            (true, true) if is_rate(left) != is_rate(right) => is_rate(right),
            _ => return None,
        };
        Some(match rate_on_right {
            true => Self { draw: left, drops_when_true: draw_below_rate },
            false => Self { draw: right, drops_when_true: !draw_below_rate },
        })
    }
}

/// `self.layerdrop`, `self.decoder_layer_drop`: named for the rate, not for a draw against it
/// (`layerdrop_prob`).
fn is_rate(expr: &Expr) -> bool {
    last_segment(expr).is_some_and(|name| name.to_ascii_lowercase().replace('_', "").ends_with("layerdrop"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(code: &str) -> Option<(String, bool)> {
        let parsed = ruff_python_parser::parse_expression(code).unwrap();
        LayerDropTest::of(parsed.expr()).map(|test| {
            let draw = &code[ruff_text_size::Ranged::range(test.draw)];
            (draw.to_string(), test.drops_when_true)
        })
    }

    #[test]
    fn a_draw_below_the_rate_drops_the_layer() {
        assert_eq!(test("dropout_probability < self.layerdrop"), Some(("dropout_probability".into(), true)));
        assert_eq!(test("self.layerdrop > p"), Some(("p".into(), true)));
        assert_eq!(test("layerdrop_prob > self.layerdrop"), Some(("layerdrop_prob".into(), false)));
        assert_eq!(test("self.layerdrop > layerdrop_prob"), Some(("layerdrop_prob".into(), true)));
        assert_eq!(test("self.encoder_layer_drop <= p"), Some(("p".into(), false)));
    }

    #[test]
    fn other_comparisons_are_not_a_layerdrop_test() {
        assert_eq!(test("p == self.layerdrop"), None);
        assert_eq!(test("0 < p < self.layerdrop"), None);
        assert_eq!(test("self.layerdrop > self.min_layerdrop"), None);
        assert_eq!(test("layerdrop_prob > self.layerdrop_prob"), None);
        assert_eq!(test("p < self.dropout"), None);
    }
}
