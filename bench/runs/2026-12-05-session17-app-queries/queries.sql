SELECT * FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 10
SELECT COUNT(*) FROM orders WHERE status = 'new'
SELECT MAX(id), MIN(id) FROM orders
SELECT MIN(created_at), MAX(created_at) FROM orders
SELECT MAX(created_at) FROM orders WHERE customer_id = 42
SELECT id, created_at FROM orders ORDER BY created_at DESC LIMIT 10
SELECT id FROM orders WHERE created_at BETWEEN '2025-03-01' AND '2025-03-02'
SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at BETWEEN '2025-03-01' AND '2025-03-02'
SELECT c.country, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country
SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id ORDER BY COUNT(*) DESC LIMIT 5
SELECT * FROM customers WHERE email = 'c77@ex.com'
SELECT * FROM customers WHERE email LIKE 'c77%'
SELECT * FROM orders WHERE customer_id IN (1,2,3,4,5) AND status = 'new'
SELECT * FROM orders WHERE customer_id = 7 OR customer_id = 9
SELECT * FROM orders WHERE status = 'new' OR customer_id = 9
SELECT COUNT(*) FROM orders WHERE id IN (SELECT order_id FROM items WHERE sku = 'sku17')
SELECT COUNT(*) FROM orders o WHERE EXISTS (SELECT 1 FROM items i WHERE i.order_id = o.id AND i.sku = 'sku17')
SELECT o.id, SUM(i.qty * i.price) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.customer_id = 42 GROUP BY o.id
SELECT * FROM orders WHERE id > 150000 ORDER BY id LIMIT 20
SELECT * FROM orders ORDER BY id DESC LIMIT 20
SELECT COUNT(*) FROM orders
SELECT COUNT(DISTINCT customer_id) FROM orders
SELECT * FROM orders WHERE customer_id = 42 AND created_at > '2025-06-01'
SELECT c.* FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL
SELECT * FROM orders WHERE amount > 999 ORDER BY amount DESC LIMIT 5
SELECT status, COUNT(*) FROM orders GROUP BY status
SELECT DISTINCT status FROM orders
SELECT * FROM orders ORDER BY created_at LIMIT 10 OFFSET 1000
SELECT i.sku, SUM(i.qty) s FROM items i GROUP BY i.sku ORDER BY s DESC LIMIT 5
SELECT * FROM orders WHERE customer_id = (SELECT id FROM customers WHERE email = 'c99@ex.com')
SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id LIMIT 10
SELECT COUNT(DISTINCT order_id) FROM items
SELECT * FROM orders WHERE status = 'new' AND created_at > '2025-12-30'
SELECT * FROM items WHERE order_id = 5 AND sku = 'sku17'
SELECT COUNT(*) FROM orders WHERE created_at >= '2025-3-1' AND created_at < '2025-3-2'
SELECT COUNT(*) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id AND o.status = 'new' WHERE o.id IS NULL
