import random
random.seed(7)
N=200000; C=5000
out=open('load.sql','w')
out.write("DROP DATABASE IF EXISTS shop; CREATE DATABASE shop; USE shop;\n")
out.write("""CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) NOT NULL, country CHAR(2) NOT NULL, created DATETIME NOT NULL, UNIQUE KEY (email), KEY (country));
CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, created_at DATETIME NOT NULL, note TEXT, KEY idx_cust_created (customer_id, created_at), KEY idx_created (created_at), KEY idx_status (status));
CREATE TABLE items (order_id BIGINT NOT NULL, line INT NOT NULL, sku VARCHAR(32) NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line), KEY (sku));
""")
cs=['US','DE','FR','GB','JP','BR','IN','CN']
rows=[]
for i in range(1,C+1):
    rows.append(f"({i},'cust{i}','c{i}@ex.com','{random.choice(cs)}','2024-{random.randint(1,12):02d}-{random.randint(1,28):02d} 10:00:00')")
out.write("INSERT INTO customers VALUES "+",".join(rows)+";\n")
st=['new','paid','shipped','done','cancelled']
w=[1,2,3,30,2]
for b in range(0,N,2000):
    rows=[];irows=[]
    for i in range(b+1,b+2001):
        s=random.choices(st,w)[0]
        rows.append(f"({i},{random.randint(1,C)},'{s}',{random.randint(100,100000)/100},'2025-{random.randint(1,12):02d}-{random.randint(1,28):02d} {random.randint(0,23):02d}:{random.randint(0,59):02d}:{random.randint(0,59):02d}','note {i}')")
        for l in range(1,random.randint(1,3)+1):
            irows.append(f"({i},{l},'sku{random.randint(1,2000)}',{random.randint(1,5)},{random.randint(100,10000)/100})")
    out.write("INSERT INTO orders VALUES "+",".join(rows)+";\n")
    out.write("INSERT INTO items VALUES "+",".join(irows)+";\n")
out.write("ANALYZE TABLE customers, orders, items;\n")
