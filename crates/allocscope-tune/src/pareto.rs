//! The Pareto front of memory against performance: the configurations no
//! other one beats on both (by their ratios to the baseline, point
//! estimates; lower is better on both). Whatever the budget, the
//! recommendation is on it or within noise of it.

/// Indices of the points on the front, ordered by memory, from
/// `(memory, performance)` cost ratios (`None` where unmeasured: never on it).
pub fn front(points: &[Option<(f64, f64)>]) -> Vec<usize> {
    let dominated = |i: usize, (m, p): (f64, f64)| {
        points.iter().enumerate().any(|(j, q)| {
            j != i && q.is_some_and(|(qm, qp)| qm <= m && qp <= p && (qm < m || qp < p || j < i))
        })
    };
    let mut on: Vec<usize> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.filter(|&p| !dominated(i, p)).map(|_| i))
        .collect();
    on.sort_by(|&a, &b| {
        let m = |i: usize| points[i].map_or(f64::INFINITY, |p| p.0);
        m(a).total_cmp(&m(b))
    });
    on
}

#[cfg(test)]
mod tests {
    use super::front;

    #[test]
    fn the_front_keeps_what_nothing_beats_on_both() {
        let points = [
            Some((1.0, 1.0)), // baseline
            Some((0.6, 1.2)), // less memory, slower: on
            Some((0.7, 1.3)), // beaten by the one above on both
            Some((0.9, 0.9)), // faster and smaller than the baseline: on
            None,             // unmeasured
            Some((0.9, 0.9)), // a tie keeps the first only
            Some((0.5, 2.0)), // least memory: on
        ];
        assert_eq!(front(&points), [6, 1, 3]);
        assert!(front(&[]).is_empty());
    }
}
